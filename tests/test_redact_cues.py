"""The cue finders' cheap tests (`privacy.cued`) skip a text only when the full pattern
could match nowhere in it: the same spans as the patterns alone, on any text."""

from __future__ import annotations

import re

from hypothesis import example, given
from hypothesis import strategies as st

from insika_knowledge.privacy import cued

_PIECES = ["IP", "ip", "İP", "ıp", "IPv6", "endereço de IP", "IP address", "DN", "dn", "DOB", "D.O.B.", "d.o.b",
           "nasci em", "nascida em", "dt nasc", "data de nascimento", "meu aniversário", "my birthday", "born on",
           "date of birth", "birthdate", "bırth", "naſc", "título de eleitor", "titulo", "inscrição eleitoral",
           "voter id", "vOTER", "12/03/1985", "1985-03-12", "12 de março de 1985", "March 12, 1985",
           "12th March 1985", "189.45.12.200", "10.0.0.1", "fe80::1", "2001:db8::ff00:42:8329", "abc::def",
           "1234 5678 9012", "123456789012", " ", ": ", " é ", " is ", ", ", "\n", "x", "0", "9"]


def _reference(text: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]], list[tuple[int, int]]]:
    ips = [m.span("ip") for m in cued._IPV4_AFTER_CUE_RE.finditer(text)
           if cued._address(re.sub(r"[\- ]", ".", m.group("ip")))]
    ips += [m.span() for m in cued._IPV6_RE.finditer(text) if m.group().count(":") >= 2 and cued._address(m.group())]
    births = [m.span("date") for m in cued._BIRTH_DATE_RE.finditer(text)]
    voters = [m.span("number") for m in cued._VOTER_ID_RE.finditer(text)]
    return ips, births, voters


@given(st.lists(st.sampled_from(_PIECES), max_size=12).map("".join) | st.text(max_size=60))
@example("meu IP é 189.45.12.200 e nasci em 12/03/1985")
@example("bIrth date: 12/03/1985")  # a capital I anywhere
@example("DOB 1985-03-12")
@example("título 1234 5678 9012")
@example("fe80::1")
def test_the_cue_finders_find_what_their_patterns_find(text: str) -> None:
    ips, births, voters = _reference(text)
    assert cued.find_ips(text) == ips
    assert cued.find_birth_dates(text) == births
    assert cued.find_voter_ids(text) == voters


def test_every_letter_a_case_blind_pattern_reads_as_ascii_is_folded() -> None:
    # the cheap tests look for ASCII words; a case-blind pattern also reads these as ASCII
    # letters ("bırth" is "birth" to it): checked over every code point
    letters = re.compile("(?i)[a-z]")
    odd = {chr(cp) for cp in range(128, 0x110000) if letters.fullmatch(chr(cp))}
    assert all(cued._cues(c).isascii() and cued._cues(c).isalpha() for c in odd), odd
    assert set(map(ord, odd)) == set(cued._CASE_BLIND)
