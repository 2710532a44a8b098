TURNS = ["The sea"]
REPLIES = {
    "writer": ["Waves fold on waves,\nthe shore keeps count."],
    "critic": ["Lovely rhythm; the second line lands well."],
}
