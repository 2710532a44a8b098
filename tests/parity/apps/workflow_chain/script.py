NODE_PATHS = True
TURNS = ["4 croissants"]
REPLIES = {}
