NODE_PATHS = True
TURNS = ["  Hello World "]
REPLIES = {}
