"""The forge's clock as its `Date` headers show it, against this server's wall clock.

A forge (GitHub) stamps what it creates (`created_at`) with its own clock, in whole seconds;
this server knows when it sent a write by its own. Every HTTP answer carries `Date` (RFC 9110,
whole seconds), so the difference is measured, not assumed: `offset` is the forge's time minus
this server's, from the latest answer that was not served from the HTTP cache (a cached
answer's `Date` is old).

    clock.observe(date_header, sent_at, received_at)    # the upstream layer, every answer
    clock.offset -> float | None                       # None until an answer was seen
    clock.error_s                                       # how far one estimate may be off

One estimate is off by at most half the round trip plus one second (`Date` is truncated to the
second, and the forge wrote it somewhere between the request's arrival and the answer's departure).
"""

from __future__ import annotations

from email.utils import parsedate_to_datetime

# the uncertainty of one estimate beyond half its round trip: Date's whole seconds
DATE_RESOLUTION_S = 1.0


class ForgeClock:
    def __init__(self) -> None:
        self.offset: float | None = None
        self.error_s = DATE_RESOLUTION_S

    def observe(self, date_header: str | None, sent_at: float, received_at: float) -> None:
        if not date_header:
            return
        try:
            forge = parsedate_to_datetime(date_header).timestamp()
        except (TypeError, ValueError, IndexError, OverflowError):
            return
        # the forge's second [forge, forge + 1) holds the instant it answered, which lies
        # between sent_at and received_at on this server's clock: take both middles
        self.offset = forge + DATE_RESOLUTION_S / 2 - (sent_at + received_at) / 2
        self.error_s = DATE_RESOLUTION_S + (received_at - sent_at) / 2
