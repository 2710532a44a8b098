TURNS = ["What's my discount?"]
REPLIES = {"loyalty_agent": [{"call": "discount", "args": {}}, "You get 20% as a gold member."]}
