"""Chat with the LLM weather agent: ``python examples/weather/chat.py "Weather in Lisbon?"``.

Needs a model provider: set CAIRN_MODEL (default gemini-2.5-flash) and that
provider's key (GOOGLE_API_KEY, OPENAI_API_KEY or ANTHROPIC_API_KEY).
Sessions are kept in .cairn/sessions.db; pass --session to continue one.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from google.genai import types

sys.path.insert(0, str(Path(__file__).resolve().parent))

from llm_agent import root_agent

from cairn import App, Runner, SqliteSessionService


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("message")
    parser.add_argument("--session", default="chat")
    parser.add_argument("--user", default="u1")
    args = parser.parse_args()
    runner = Runner(
        app=App(name="weather", root_agent=root_agent),
        session_service=SqliteSessionService(),
        auto_create_session=True,
    )
    message = types.Content(role="user", parts=[types.Part(text=args.message)])
    async for event in runner.run_async(
        user_id=args.user, session_id=args.session, new_message=message
    ):
        for part in event.content.parts if event.content and event.content.parts else []:
            if part.text:
                print(f"{event.author}: {part.text}")
            elif part.function_call:
                print(f"{event.author} -> {part.function_call.name}({part.function_call.args})")
        if event.error_message:
            print(f"error: {event.error_message}")


if __name__ == "__main__":
    asyncio.run(main())
