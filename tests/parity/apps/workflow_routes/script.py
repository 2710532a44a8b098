NODE_PATHS = True
TURNS = ["I want a refund for order 7", "When do you open?"]
REPLIES = {}
