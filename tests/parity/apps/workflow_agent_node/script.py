NODE_PATHS = True
TURNS = ["Q: What colour is the sky?"]
REPLIES = {"answerer": ["Blue"]}
