"""The apps a server serves, found in ``agents_dir`` and loaded on first use (one Runner each)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic import ValidationError

from cairn.apps.app import App
from cairn.cli._errors import CommandError
from cairn.cli._loading import Target, is_agent_folder, load_target
from cairn.errors import CairnError
from cairn.runners.runner import Runner
from cairn.server.services import Services


class AppNotFoundError(CairnError, LookupError):
    """The request names an app the server does not serve."""

    def __init__(self, app_name: str, known: list[str]) -> None:
        self.app_name = app_name
        served = ", ".join(repr(name) for name in known) or "none"
        super().__init__(
            f"app {app_name!r} is not served here (apps: {served}). Use a name from "
            "GET /list-apps, or add a directory of that name that defines root_agent or app "
            "to the server's agents directory."
        )


class AppLoadError(CairnError, RuntimeError):
    """An app's code failed to load or defines no agent."""


class AppRegistry:
    """Apps by name: every subdirectory of ``agents_dir`` that holds ``agent.py``,
    ``__init__.py`` or ``root_agent.yaml`` (ADK's conventions), or ``agents_dir`` itself when
    it is one agent file, package or config folder (then named as ``cairn run`` names it).
    Each app gets one Runner per process."""

    def __init__(
        self,
        agents_dir: Path,
        services: Services,
        *,
        auto_create_session: bool,
        lease_ttl: float,
    ) -> None:
        self.agents_dir = agents_dir.expanduser().resolve()
        self.services = services
        self.auto_create_session = auto_create_session
        self.lease_ttl = lease_ttl
        self._runners: dict[str, Runner] = {}
        self._single: Runner | None = None
        self._lock = asyncio.Lock()

    def _is_single_app(self) -> bool:
        path = self.agents_dir
        if path.is_file():
            return True
        return is_agent_folder(path)

    def _directories(self) -> dict[str, Path]:
        if not self.agents_dir.is_dir():
            return {}
        return {
            entry.name: entry
            for entry in sorted(self.agents_dir.iterdir())
            if entry.is_dir() and not entry.name.startswith((".", "_")) and is_agent_folder(entry)
        }

    async def names(self) -> list[str]:
        """The names of the apps served, sorted."""
        if self._is_single_app():
            return [(await self._single_runner()).app_name]
        return sorted(self._directories())

    async def runner(self, app_name: str) -> Runner:
        """The app's Runner (loading the app's code the first time); ``AppNotFoundError``."""
        if self._is_single_app():
            single = await self._single_runner()
            if single.app_name != app_name:
                raise AppNotFoundError(app_name, [single.app_name])
            return single
        if app_name in self._runners:
            return self._runners[app_name]
        async with self._lock:
            if app_name not in self._runners:
                directory = self._directories().get(app_name)
                if directory is None:
                    raise AppNotFoundError(app_name, sorted(self._directories()))
                self._runners[app_name] = self._make_runner(_load(directory), app_name)
        return self._runners[app_name]

    async def check(self, app_name: str) -> None:
        """Raise ``AppNotFoundError`` unless ``app_name`` is served (without loading it)."""
        if self._is_single_app():
            await self.runner(app_name)
        elif app_name not in self._directories():
            raise AppNotFoundError(app_name, sorted(self._directories()))

    async def folder(self, app_name: str) -> Path:
        """The app's folder (where ADK keeps its eval sets and results): its directory under
        ``agents_dir``; when ``agents_dir`` is the one app, that folder, or for an agent file
        the folder named after the file beside it. ``AppNotFoundError``."""
        await self.check(app_name)
        if not self._is_single_app():
            return self.agents_dir / app_name
        if self.agents_dir.is_dir():
            return self.agents_dir
        return self.agents_dir.parent / self.agents_dir.stem

    async def _single_runner(self) -> Runner:
        async with self._lock:
            if self._single is None:
                target = _load(self.agents_dir)
                self._single = self._make_runner(target, target.name)
        return self._single

    def _make_runner(self, target: Target, app_name: str) -> Runner:
        if target.app is None:
            return Runner(
                app_name=app_name,
                agent=target.agent,
                session_service=self.services.session_service,
                artifact_service=self.services.artifact_service,
                memory_service=self.services.memory_service,
                auto_create_session=self.auto_create_session,
                session_lease_ttl=self.lease_ttl,
            )
        app = target.app
        if app.name != app_name:  # an app is named after its directory
            fields = {name: getattr(app, name) for name in App.model_fields}
            try:
                app = App.model_validate({**fields, "name": app_name})
            except ValidationError as exc:
                raise AppLoadError(
                    f"app directory {app_name!r} cannot name its App: "
                    f"{exc.errors()[0]['msg']}. Rename the directory to a valid app name "
                    f"(e.g. {target.app.name!r})."
                ) from None
        return Runner(
            app=app,
            session_service=self.services.session_service,
            artifact_service=self.services.artifact_service,
            memory_service=self.services.memory_service,
            auto_create_session=self.auto_create_session,
            session_lease_ttl=self.lease_ttl,
        )

    async def close(self) -> None:
        """Close every loaded app's Runner (plugins, toolsets)."""
        runners = [*self._runners.values(), *([self._single] if self._single else [])]
        self._runners.clear()
        self._single = None
        for runner in runners:
            await runner.close()


def _load(path: Path) -> Target:
    try:
        return load_target(path)
    except CommandError as exc:
        raise AppLoadError(f"the app at {path} could not be loaded: {exc}") from exc
