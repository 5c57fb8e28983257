"""The conservative estimate against real cl100k and o200k counts.

The counts were taken with tiktoken (cl100k_base and o200k_base) on these exact strings.
"""

from __future__ import annotations

import pytest

from middleware.cards import tokens
from middleware.cards.tokens import conservative_estimate, count_tokens, tokenizer_name

# (text, cl100k_base tokens, o200k_base tokens)
KNOWN = [
    ("Hello, world!", 4, 4),
    ("The quick brown fox jumps over the lazy dog.", 10, 10),
    ("1234567890", 4, 4),
    ("今日は良い天気です。", 10, 10),
    ("Schadensersatzanspruch", 8, 8),
    ('<card type="living_memory" tag="living_memory">\n…\n</card>', 16, 16),
    (
        "I finished the first draft of the opposition brief last night. Tomorrow I want to "
        "tighten the scienter argument and check every citation against the record before "
        "we send it to the partner for review.",
        38,
        38,
    ),
    (
        "Der Schadensersatzanspruch wurde im Berufungsverfahren erneut geprüft. Die Kläger "
        "verlangen Ersatz für die Kursverluste, die nach der Veröffentlichung der "
        "Korrekturmeldung eingetreten sind. Wir müssen die Ereignisstudie bis Freitag "
        "abschließen.",
        75,
        51,
    ),
    (
        "Nous avons terminé les sous-sections un à trois concernant l'impact sur le prix. "
        "L'étude d'événement est toujours en attente : nous attendons les données de "
        "Christensen. Il faut répondre plus directement à l'arrêt Dura dans l'introduction.",
        62,
        51,
    ),
    (
        "La reunión con el cliente se aplazó hasta el próximo miércoles. Todavía falta "
        "revisar la sección de daños y preparar la declaración del perito económico, según "
        "lo acordado el lunes pasado.",
        50,
        39,
    ),
    (
        "We hebben de subsecties een tot en met drie over de prijsimpact afgerond. De "
        "gebeurtenisstudie wacht nog steeds op de gegevens van Christensen. In de inleiding "
        "moeten we directer ingaan op de zaak Dura.",
        61,
        48,
    ),
    (
        "Zakończyliśmy podrozdziały od pierwszego do trzeciego. Analiza zdarzeń wciąż czeka "
        "na dane od Christensena. Trzeba bezpośrednio odnieść się do sprawy Dura we wstępie.",
        60,
        56,
    ),
    (
        "Мы закончили разделы с первого по третий о влиянии на цену. Событийный анализ всё "
        "ещё ожидает данных от Кристенсена. Нужно прямо ответить на дело Дура во введении.",
        75,
        45,
    ),
    (
        "Ολοκληρώσαμε τις υποενότητες ένα έως τρία σχετικά με την επίδραση στην τιμή. Η "
        "μελέτη γεγονότων εκκρεμεί ακόμη.",
        101,
        37,
    ),
    (
        "我们已经完成了关于价格影响的第一至第三小节。事件研究仍在等待克里斯滕森的数据。"
        "需要在引言中更直接地回应杜拉案。",
        59,
        40,
    ),
    (
        "価格への影響に関する第1節から第3節を完了しました。イベントスタディはまだクリステンセン"
        "のデータ待ちです。序論でデュラ判決にもっと直接触れる必要があります。",
        81,
        51,
    ),
    (
        "가격 영향에 관한 1~3절을 완료했습니다. 사건 연구는 아직 크리스텐슨의 데이터를 "
        "기다리고 있습니다. 서론에서 듀라 판결을 더 직접적으로 다뤄야 합니다.",
        81,
        45,
    ),
    (
        "Invoice 2024-11-03: 1,234,567.89 USD; ref #A-99812; call +1 (415) 555-0199 at "
        "14:30 UTC; ratio 3.14159265 / 2.71828; IDs 0x7fff5fbff8a8 9f86d081884c7d65",
        81,
        81,
    ),
    (
        '{"work_context_id": "wc:telegram:12345", "summary": "Drafted §3.2", "captured_at": '
        '"2025-11-17T09:30:00Z", "items": [1, 2, 3], "ok": true}',
        61,
        61,
    ),
    (
        "See https://example.com/path/to/resource?id=12345&sort=desc#section-2 and "
        "git@github.com:owner/repo.git for details; file "
        "/usr/local/lib/python3.11/site-packages/x.py",
        46,
        47,
    ),
    ("Shipped it 🚀🎉 — thanks team! ✅ Tests pass 👍 next: deploy 🔥", 24, 20),
    (
        "## Notes\n\n- [ ] Draft intro\n- [x] Subsections 1-3\n\n> Quote: *price impact* vs "
        "**corrective disclosure**\n\n```python\nprint('hi')\n```\n",
        42,
        42,
    ),
    (
        'def add(a, b):\n    """Return the sum."""\n    return a + b\n\n\nclass Store:\n'
        "    def __init__(self, path: str) -> None:\n        self._path = path\n",
        42,
        42,
    ),
    (
        '<card type="continuity" tag="resume">\nHenderson damages section — drafting '
        "phase.\nLast session (Mon): Completed subsections 1-3 (price impact). Event study "
        "pending — waiting on Christensen data.\nOpen: Need to address Dura more directly "
        "in intro.\nDecision: Focusing on price impact approach over corrective disclosure "
        "alone.\nSince last session: DOC72 updated in another conversation (entity graph "
        "changes).\n</card>",
        89,
        88,
    ),
]


@pytest.mark.parametrize(("text", "cl100k", "o200k"), KNOWN, ids=[t[:24] for t, _, _ in KNOWN])
def test_estimate_never_undercounts_known_counts(text: str, cl100k: int, o200k: int) -> None:
    assert conservative_estimate(text) >= max(cl100k, o200k)


def test_estimate_stays_within_reach_of_english() -> None:
    # Conservative, not absurd: plain English costs at most ~1.5x the real count, or the
    # §6.1 example card (89 real tokens) would not fit its 120-token cap.
    english = [
        (t, c)
        for t, c, _ in KNOWN
        if t.startswith(("I finished", "The quick", '<card type="continuity"'))
    ]
    for text, real in english:
        assert conservative_estimate(text) <= real * 1.5


def test_empty_text_costs_nothing() -> None:
    assert conservative_estimate("") == 0
    assert count_tokens("") == 0


def test_count_tokens_falls_back_to_the_estimate_without_the_offline_encoding() -> None:
    if tokenizer_name() == "estimate":
        assert count_tokens(KNOWN[6][0]) == conservative_estimate(KNOWN[6][0])
    else:
        # The offline cl100k encoding is installed: counts are exact.
        for text, cl100k, _ in KNOWN:
            assert count_tokens(text) == cl100k


def test_a_broken_offline_encoding_is_not_fatal(monkeypatch: pytest.MonkeyPatch) -> None:
    tokens._offline_counter.cache_clear()
    monkeypatch.setattr(tokens, "OFFLINE_ENCODING", "no_such_encoding_here")
    try:
        assert count_tokens("Hello, world!") == conservative_estimate("Hello, world!")
        assert tokenizer_name() == "estimate"
    finally:
        tokens._offline_counter.cache_clear()
