"""``python -m cairn.cli``: the same as the ``cairn`` command."""

from cairn.cli import main

if __name__ == "__main__":
    main(prog_name="cairn")
