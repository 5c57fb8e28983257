"""The pipeline definition: which stages run, in which order. One line per stage."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from middleware.awareness.stage import answers_directive, awareness_stage
from middleware.awareness.view import AwarenessSettings
from middleware.clock.render_stage import time_rendering_stage
from middleware.clock.source import Clock
from middleware.clock.stage import ClockSettings, clock_stage, witnessed_location
from middleware.commands import answers_itself, command_names, commands_stage
from middleware.commands.action_commands import action_commands
from middleware.commands.admin_commands import admin_commands
from middleware.commands.continuity_commands import continuity_commands
from middleware.commands.forget_commands import forget_commands
from middleware.commands.link_commands import link_commands
from middleware.commands.locale_commands import locale_commands
from middleware.commands.time_commands import time_commands
from middleware.continuity.service import ContinuityService, ContinuitySettings
from middleware.continuity.stage import continuity_stage
from middleware.forward import forward_to
from middleware.identity import identity_stage
from middleware.impact.stage import ImpactSettings, held_call_stage, impact_stage
from middleware.injection import InjectionMemory, injection_stage
from middleware.notices import Notices, notices_stage
from middleware.pipeline import Handler, Stage, compose
from middleware.recording import recording_stage
from middleware.store import Store
from middleware.types import Turn, Upstream
from proxy.config import Config


def build_pipeline(
    config: Config,
    store: Store,
    clock: Clock,
    upstream: Upstream,
    continuity: ContinuityService,
    notices: Notices,
) -> Handler:
    """Compose the stages once at startup. ``notices`` (what to tell a user on their next
    message, e.g. which timezone a link kept) is shared with the admin API, which links
    accounts too."""
    # The blocks injected lately, shared with /forget, /memory forget and memory learning
    # ("please forget that …"), which must drop what they delete.
    injections = InjectionMemory(store)
    commands = {
        **time_commands(store),
        **locale_commands(store),
        **action_commands(store),
        **link_commands(store, notices),
        **admin_commands(store, chat_admins(config), notices),
        **forget_commands(store, injections, notices),
        **continuity_commands(continuity, injections),
    }
    stages: list[Stage] = [
        identity_stage(config.server.agent_id),
        # Outside recording: the transcript keeps the model's <time …> markup.
        time_rendering_stage(store, clock_enabled=config.clock.enabled),
        # Before anything that can fail, so the inbound message is never lost.
        # A message only witnessed stops there: the clock keeps the place it says.
        recording_stage(
            store,
            clock,
            cross_channel=config.clock.cross_channel_tracking,
            witness=witnessed_location(store, clock_settings(config)),
            # A chat command or a settings directive the relay answers is stored as a
            # command: no read ever takes it for conversation, nor for contact.
            is_command=either(
                answers_itself(command_names(commands)),
                answers_directive(awareness_settings(config)),
            ),
        ),
        # Before commands: any next message answers a held tool call's request to confirm.
        held_call_stage(store, impact_settings(config)),
        commands_stage(commands),
        clock_stage(store, clock_settings(config)),
        # After the clock, whose line comes first in the block.
        notices_stage(notices),
        # After the clock (it reads whether the message mentions times).
        awareness_stage(store, awareness_settings(config)),
        impact_stage(store, impact_settings(config)),
        # Sessions, living memory, pre-compaction capture and the tier cards at boot.
        continuity_stage(continuity, injections),
        # Last: renders what the stages above added and replays earlier blocks.
        injection_stage(
            store,
            placement=config.clock.placement,
            max_tokens=config.clock.max_block_tokens,
            memory=injections,
        ),
    ]
    return compose(stages, forward_to(upstream))


def either(*predicates: Callable[[Turn], bool]) -> Callable[[Turn], bool]:
    """Whether any of ``predicates`` holds for the turn."""

    def any_holds(turn: Turn) -> bool:
        return any(holds(turn) for holds in predicates)

    return any_holds


def chat_admins(config: Config) -> frozenset[str]:
    """The user keys allowed to use /admin: ``[auth] chat_admins`` plus every channel's
    ``admin_user_ids`` as ``<channel>:<id>``."""
    keys = set(config.auth.chat_admins)
    for name in type(config.channels).model_fields:
        ids = getattr(getattr(config.channels, name), "admin_user_ids", ())
        keys.update(f"{name}:{platform_id}" for platform_id in ids)
    return frozenset(keys)


def clock_settings(config: Config) -> ClockSettings:
    return ClockSettings(
        enabled=config.clock.enabled,
        mode=config.clock.mode,
        ambiguity_threshold=timedelta(hours=config.clock.ambiguity_threshold_hours),
    )


def awareness_settings(config: Config) -> AwarenessSettings:
    clock = config.clock
    return AwarenessSettings(
        enabled=clock.enabled,
        mode=clock.mode,
        checkins=clock.checkins,
        actions=clock.store.latest_actions,
        inference=clock.inference,
    )


def impact_settings(config: Config) -> ImpactSettings:
    inference = config.clock.inference
    guard = inference.impactful_tool_guard
    return ImpactSettings(
        guard=guard if inference.require_confirmation_for_impactful_actions else "off",
        patterns=tuple(inference.impactful_tool_patterns),
        confirmation_ttl=inference.confirmation_ttl,
    )


def continuity_service(
    config: Config, store: Store, clock: Clock, upstream: Upstream
) -> ContinuityService:
    settings = ContinuitySettings(config.continuity, config.cards, config.memory)
    # The inspect upstream answers with the request itself, never JSON: capture
    # deterministically rather than fail over on every pass.
    synthesis = None if config.upstream.mode == "inspect" else upstream
    return ContinuityService(store, settings, clock, synthesis, model=config.upstream.model)
