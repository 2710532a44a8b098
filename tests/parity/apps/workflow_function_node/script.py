NODE_PATHS = True
TURNS = ["a sentence of some length"]
REPLIES = {}
