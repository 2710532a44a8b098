NODE_PATHS = True
TURNS = ["two apples", "a crate of ripe red apples please"]
REPLIES = {}
