"""The conversation ``cairn run`` holds with one session: typed at a prompt, or replayed.

Pending interrupts come first: a session that paused (yesterday, in another
process) is resumed by answering them, before any new message is asked for. A
message typed while some still wait (skipped ones) starts a new invocation and
leaves them waiting, so the user is told which wait, and asked at a terminal
whether to answer them first.
"""

from __future__ import annotations

from pathlib import Path

from google.genai import types
from rich.console import Console
from rich.text import Text
from rich.traceback import Traceback

from cairn.agents.run_config import MultitaskStrategy, RunConfig, StreamingMode
from cairn.cli._errors import EXIT_AGENT_FAILED, EXIT_OK, CommandError, refused_code
from cairn.cli._prompts import ContinueInvocation, Quit, Reply, Terminal, ask, response_for
from cairn.cli._render import VERBOSE_HINT, EventPrinter, compact, print_error, show_interrupt
from cairn.cli._replay import Answer, AnswerItem, Continue, Say, Turn
from cairn.cli._run_log import RunLog
from cairn.errors import CairnError, SessionBusyError
from cairn.events.interrupts import Interrupt
from cairn.runners.runner import Runner
from cairn.sessions.config import GetSessionConfig
from cairn.sessions.lease import holder_name
from cairn.sessions.run_store import RunStatus, run_store_for

COMMANDS = {
    "/pending": "list the pending interrupts",
    "/answer": "answer the pending interrupts, the skipped ones too",
    "/help": "show these commands",
    "/quit": "quit (so do an empty line and Ctrl-D); the session stays in the store",
}


def user_message(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


class Chat:
    """Runs one session's turns through ``runner`` and prints what happens; the model's
    text streams as it comes unless ``stream=False`` (``--no-stream``). A failure is one
    line; ``verbose`` (``--verbose``) adds its traceback."""

    def __init__(
        self,
        runner: Runner,
        console: Console,
        *,
        user_id: str,
        session_id: str,
        errors: Console,
        stream: bool = True,
        verbose: bool = False,
        log: RunLog | None = None,
        env_file: Path | None = None,
    ):
        self.runner, self.console, self.errors = runner, console, errors
        self.user_id, self.session_id = user_id, session_id
        self.verbose = verbose
        self.printer = EventPrinter(console, log=log, env_file=env_file)
        mode = StreamingMode.SSE if stream else StreamingMode.NONE
        self.run_config = RunConfig(streaming_mode=mode)

    async def pending(self) -> list[Interrupt]:
        return await self.runner.list_pending_interrupts(
            user_id=self.user_id, session_id=self.session_id
        )

    def show_pending(self, pending: list[Interrupt], *, full: bool = False) -> None:
        if not pending:
            self.console.print(Text("no pending interrupts", style="dim"))
            return
        self.console.print(Text(f"{len(pending)} pending interrupt(s):", style="yellow"))
        for interrupt in pending:
            show_interrupt(self.console, interrupt, full=full)

    async def send(
        self, message: types.Content | None = None, *, invocation_id: str | None = None
    ) -> int | None:
        """Run one invocation and print its events; the exit code of a failure, or None.

        A session busy with another invocation (another process, a server's run) is said
        so, with how many wait before this one, and then waited for in line."""
        queueing = self.runner.multitask_strategy is MultitaskStrategy.ENQUEUE
        first = self.run_config
        if queueing:  # ask for the session without waiting first, to tell the user if not
            first = first.model_copy(update={"multitask_strategy": MultitaskStrategy.REJECT})
        try:
            try:
                await self._invoke(message, invocation_id, first)
            except SessionBusyError as busy:
                if not queueing:
                    raise
                await self._say_queued(busy)
                await self._invoke(message, invocation_id, self.run_config)
        except CairnError as exc:
            self.printer.end_run()
            print_error(self.console, f"error: {exc}")
            return refused_code(exc)
        except Exception as exc:
            self.printer.end_run()
            hint = "" if self.verbose else f" {VERBOSE_HINT}"
            print_error(self.console, f"the agent failed: {type(exc).__name__}: {exc}{hint}")
            if self.verbose:
                trace = Traceback.from_exception(type(exc), exc, exc.__traceback__, max_frames=8)
                self.console.print(trace)
            return EXIT_AGENT_FAILED
        self.printer.end_run()
        return None

    async def _invoke(
        self, message: types.Content | None, invocation_id: str | None, run_config: RunConfig
    ) -> None:
        async for event in self.runner.run_async(
            user_id=self.user_id,
            session_id=self.session_id,
            new_message=message,
            invocation_id=invocation_id,
            run_config=run_config,
        ):
            self.printer.show(event)

    async def _say_queued(self, busy: SessionBusyError) -> None:
        """Tell the user the message waits its turn: behind the running invocation, the
        callers of this process ahead of it and the runs a server has queued."""
        queued = 0
        try:
            rows = run_store_for(self.runner.session_service)
        except TypeError:
            rows = None  # a store without runs: only this process's line is known
        if rows is not None:
            queued = len(
                await rows.list_runs(
                    self.runner.app_name,
                    self.user_id,
                    self.session_id,
                    statuses={RunStatus.PENDING},
                )
            )
        behind = 1 + busy.ahead + queued
        running = f"invocation {holder_name(busy.holder)}" if busy.holder else "another invocation"
        self.console.print(
            Text(
                f"the session is busy ({running} is running): your message is queued behind "
                f"{behind} run(s) and starts when they end (Ctrl-C gives up; "
                f"`cairn runs list {self.session_id}` lists them)",
                style="yellow",
            )
        )

    async def show_transcript(self, limit: int) -> None:
        """The session's last ``limit`` events, as the run printed them, before going on."""
        session = await self.runner.session_service.get_session(
            app_name=self.runner.app_name,
            user_id=self.user_id,
            session_id=self.session_id,
            config=GetSessionConfig(num_recent_events=limit + 1),
        )
        events = [e for e in session.events if not e.partial] if session else []
        if not events:
            self.console.print(Text("  nothing said yet", style="dim"))
            return
        if len(events) > limit:
            events = events[1:]
            self.console.print(
                Text(
                    f"  so far (the last {limit} events; cairn sessions show "
                    f"{self.session_id} --events N lists more):",
                    style="dim",
                )
            )
        else:
            self.console.print(Text("  so far:", style="dim"))
        for event in events:
            self.printer.show(event, stored=True)
        self.printer.end_line()
        self.console.print(Text("  (end of the transcript)", style="dim"))

    # -- at the prompt ---------------------------------------------------------------------
    async def interactive(self, terminal: Terminal) -> int:
        """Prompt for pending interrupts, then for messages, until the user quits."""
        skipped: set[str] = set()
        try:
            pending = await self.pending()
            while True:
                waiting = [i for i in pending if i.id not in skipped]
                if waiting:
                    await self._answer(waiting, terminal, skipped)
                    pending = await self.pending()
                    continue
                line = terminal.ask("you> ")
                if not line:
                    return EXIT_OK
                if line in ("/pending", "/answer", "/help"):
                    pending = await self.pending()
                    if line == "/pending":
                        self.show_pending(pending, full=True)
                    elif line == "/answer":
                        skipped.clear()
                        if not pending:
                            self.show_pending(pending)
                    else:
                        self._help()
                    continue
                if line.startswith("/") and not line.startswith("//"):
                    print_error(
                        self.console,
                        f"unknown command {line.split()[0]}; /help lists them "
                        "(start a message with // to send one that begins with /)",
                    )
                    continue
                pending = await self.pending()  # another process may have answered some
                if pending and self._answer_first(pending, terminal):
                    skipped.clear()
                    await self._answer(pending, terminal, skipped)
                    self.console.print(Text("now sending your message", style="dim"))
                await self.send(user_message(line.removeprefix("/")))
                pending = await self.pending()
        except Quit:
            return EXIT_OK

    def _answer_first(self, pending: list[Interrupt], terminal: Terminal) -> bool:
        """Say that ``pending`` still wait before a new message goes out; at a terminal, ask
        whether to answer them first (True). Without one, say so on stderr and send it."""
        if not terminal.interactive:
            self._pending_note(pending, "answer with /answer, or later with --session")
            return False
        self.console.print(
            Text(
                f"{_count(pending)} still pending. A new message starts a new run, and "
                f"{_waiting(pending)}:",
                style="yellow",
            )
        )
        for interrupt in pending:
            show_interrupt(self.console, interrupt)
        return bool(
            terminal.yes_or_no(
                f"answer {'it' if len(pending) == 1 else 'them'} first, then send your message? "
                "[y/n, n or empty sends it now]> "
            )
        )

    def _pending_note(self, pending: list[Interrupt], how: str) -> None:
        """The notice on stderr, where nobody can be asked: the message is sent anyway."""
        asks = "; ".join(
            f"{i.kind} {i.id}" + (f": {i.message.rstrip('.')}" if i.message else "")
            for i in pending
        )
        self.errors.print(
            Text(
                f"note: {_count(pending)} still pending ({asks}). Sending the message anyway: "
                f"it starts a new run, and {_waiting(pending)} ({how}).",
                style="yellow",
            )
        )

    def _help(self) -> None:
        for command, meaning in COMMANDS.items():
            self.console.print(Text.assemble(Text(f"  {command:<10}", style="bold"), meaning))

    async def _answer(
        self, waiting: list[Interrupt], terminal: Terminal, skipped: set[str]
    ) -> None:
        """Ask about each interrupt in ``waiting``, then send the answers, one message per
        invocation (a message answers interrupts of one invocation)."""
        self.console.print(
            Text(
                f"{len(waiting)} pending interrupt(s): answer each, or press Enter to skip it",
                style="yellow",
            )
        )
        replies: dict[str, list[Reply]] = {}
        decided: set[str] = set()  # interrupted invocations asked about (one question each)
        for interrupt in waiting:
            if interrupt.kind == "interrupted":
                if interrupt.invocation_id in decided:
                    continue
                decided.add(interrupt.invocation_id)
            show_interrupt(self.console, interrupt)
            decision = ask(interrupt, terminal)
            if isinstance(decision, Reply):
                replies.setdefault(interrupt.invocation_id, []).append(decision)
            elif isinstance(decision, ContinueInvocation):
                replies.setdefault(decision.invocation_id, [])
            elif interrupt.kind == "interrupted":
                skipped.update(
                    i.id
                    for i in waiting
                    if i.kind == "interrupted" and i.invocation_id == interrupt.invocation_id
                )
            else:
                skipped.add(interrupt.id)
        for invocation_id, answers in replies.items():
            if answers:
                await self.send(types.Content(role="user", parts=[r.part() for r in answers]))
            else:
                await self.send(invocation_id=invocation_id)

    # -- from a replay file ------------------------------------------------------------------
    async def replay(self, turns: list[Turn]) -> int:
        """Send each turn in order; stop at the first failure, with its exit code.

        Interrupts still pending at the end are listed and left waiting.
        """
        pending = await self.pending()
        if pending:
            self.show_pending(pending)
        for turn in turns:
            if isinstance(turn, Say):
                self._echo(f"you> {turn.text}")
                pending = await self.pending()
                if pending:
                    self._pending_note(pending, "answer in a later turn, or with --session")
                failure = await self.send(user_message(turn.text))
            elif isinstance(turn, Answer):
                pending = await self.pending()
                replies = [self._reply(item, pending) for item in turn.items]
                for reply in replies:
                    self._echo(f"answer {reply.interrupt.id}: {compact(reply.response)}")
                failure = await self.send(
                    types.Content(role="user", parts=[r.part() for r in replies])
                )
            else:
                invocation_id = self._to_continue(turn, await self.pending())
                self._echo(f"continue {invocation_id}")
                failure = await self.send(invocation_id=invocation_id)
            if failure is not None:
                return failure
        pending = await self.pending()
        if pending:
            self.show_pending(pending)
            self.console.print(
                Text("they stay pending; answer them by continuing this session", style="dim")
            )
        return EXIT_OK

    def _echo(self, text: str) -> None:
        self.console.print(Text(text, style="bold blue"))

    @staticmethod
    def _reply(item: AnswerItem, pending: list[Interrupt]) -> Reply:
        answerable = [i for i in pending if i.kind != "interrupted"]
        if item.id is None:
            matches = answerable
            if len(matches) != 1:
                raise CommandError(
                    f'the replay answers without an "id", which needs exactly one pending '
                    f"interrupt; pending: {_ids(answerable)}. Add the id to the answer."
                )
        else:
            matches = [
                i
                for i in answerable
                if item.id in (i.id, i.function_call.id if i.function_call else None)
            ]
            if not matches:
                raise CommandError(
                    f"the replay answers {item.id!r}, which is not pending; pending: "
                    f"{_ids(answerable)}. An answer's id is the interrupt's id or the id of "
                    "the tool call it is about."
                )
        interrupt = matches[0]
        return Reply(interrupt, response_for(interrupt, item.response))

    @staticmethod
    def _to_continue(turn: Continue, pending: list[Interrupt]) -> str:
        if turn.invocation_id is not None:
            return turn.invocation_id
        stopped = sorted({i.invocation_id for i in pending if i.kind == "interrupted"})
        if len(stopped) != 1:
            raise CommandError(
                f'the replay says {{"continue": true}}, which needs exactly one interrupted '
                f"invocation; interrupted: {stopped or 'none'}. Name the invocation id instead."
            )
        return stopped[0]


def _count(interrupts: list[Interrupt]) -> str:
    return "1 interrupt is" if len(interrupts) == 1 else f"{len(interrupts)} interrupts are"


def _waiting(interrupts: list[Interrupt]) -> str:
    return "the pending one stays waiting" if len(interrupts) == 1 else "those stay waiting"


def _ids(interrupts: list[Interrupt]) -> str:
    return ", ".join(repr(i.id) for i in interrupts) or "none"
