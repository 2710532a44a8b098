STATE = {"level": "beginner"}
TURNS = ["What is 7 x 8?"]
REPLIES = {"tutor": ["7 x 8 is 56."]}
