TURNS = ["A slogan for a bakery"]
REPLIES = {
    "draft_writer": ["Bread.", "Fresh bread, every dawn."],
    "slogan_critic": ["Too short.", {"call": "exit_loop", "args": {}}],
}
