"""Banners in the chat: one line, whatever the effort's name."""

from __future__ import annotations


async def test_a_long_effort_name_is_ellipsized_so_its_banner_stays_one_line():
    from ccm_tui.ui.widgets.banner import BannerLine
    from tests.helpers.tui import WidgetHost

    long_id = "migrate-the-billing-service-from-the-legacy-monolith-to-the-new-event-pipeline"
    banner = BannerLine(f"--- Expanded effort: {long_id} (1,204 tokens loaded) ---")
    async with WidgetHost(banner).run_test(size=(60, 10)) as pilot:
        await pilot.pause()
        shown = str(banner.render())
        assert banner.size.height == 1, shown
        assert shown.startswith("--- Expanded effort: migra") and shown.endswith("(1,204 tokens loaded) ---")
        assert "…" in shown and len(shown) <= banner.content_region.width
        await pilot.resize_terminal(200, 10)
        await pilot.pause()
        assert str(banner.render()) == f"--- Expanded effort: {long_id} (1,204 tokens loaded) ---"
