TURNS = ["What is the sum of 1 to 100?", "And a failing run?"]
REPLIES = {
    "calculator": [
        "Computing.\n```python\nprint(sum(range(101)))\n```\nthis is cut",
        "The sum is 5050.",
        "```tool_code\nraise ValueError('bad')\n```",
        "That run failed.",
    ]
}
