TURNS = ["I live in Kyoto", "Now do it again"]
REPLIES = {
    "collector": ["Kyoto", "Kyoto"],
    "stateless_writer": ["Kyoto: where time slows down.", "Kyoto: temples at every turn."],
}
