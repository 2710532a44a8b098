STATE = {"user_name": "Ada"}
TURNS = ["Hi!"]
REPLIES = {"greeter": ["Hello Ada!"]}
