"""`hindcast markets show`: one market as text."""

from __future__ import annotations


def render(view: dict) -> str:
    m, r = view["market"], view["resolution"] or {}
    lines = [
        f"{m['id']}  [{m['source']}, topic {m['topic']}]",
        m["question"],
        m["url"],
        f"resolution: {r.get('status', 'unknown')} at {r.get('resolved_at')} (public by "
        f"{r.get('known_at')})",
        _render_lifetime(view["lifetime"]),
        f"price points: {view['price_points']}",
    ] + _render_meta(view["meta"])
    if "at_t0" in view:
        lines += _render_t0(view["at_t0"])
    return "\n".join(lines)


def _render_meta(meta: dict | None) -> list[str]:
    if not meta:
        return []
    labels = " / ".join(meta["outcomes"])
    yes = meta["outcomes"][meta["yes_index"]] if meta["outcomes"] else "-"
    return [
        f"source id {meta['source_id']}; outcomes {labels} (YES = {yes!r}); negRisk "
        f"{meta['neg_risk']}; category {meta['category'] or '-'}; tags "
        f"{', '.join(meta['tags']) or '-'}",
        _render_provenance(meta),
        _render_resolution_meta(meta),
    ]


def _render_provenance(meta: dict) -> str:
    bucket = meta.get("price_bucket_seconds")
    return (
        f"prices: venue {meta.get('venue', 'polymarket')}; route "
        f"{meta.get('price_route') or 'not recorded'}; bucket "
        f"{f'{bucket} s' if bucket else 'not recorded'}; definition "
        f"{meta.get('price_definition') or 'not recorded'}"
    )


def _render_resolution_meta(meta: dict) -> str:
    chain = " → ".join(meta.get("resolution_statuses") or ()) or "not recorded"
    rules = meta.get("rules_updated_at")
    return (
        f"resolution: disputed {'yes' if meta.get('disputed') else 'no'}; "
        f"rules updated {('at ' + rules) if rules else 'no'}; status chain {chain}"
    )


def _render_lifetime(life: dict | None) -> str:
    if life is None:
        return "lifetime: unknown (no opening date and no price history)"
    return (
        f"lifetime: {life['start']} → {life['end']} ({life['days']} days; from the opening or "
        "the first price)"
    )


def _render_t0(at: dict) -> list[str]:
    price = at["price"]
    said = (
        f"{price['p']} (the point at {price['t']})" if price else "none (no price point before t0)"
    )
    return [f"at t0 {at['t0']}: price {said}", "description as it stood:", at["description"]]
