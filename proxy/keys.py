"""Typed keys for the aiohttp application state."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiohttp import web

if TYPE_CHECKING:
    from proxy.services import Services

SERVICES: web.AppKey[Services] = web.AppKey("services")
