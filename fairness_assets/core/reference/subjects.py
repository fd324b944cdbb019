"""The QS broad subject areas (METHOD.md §7): the five areas a program is tagged with, and the areas a
prompt template may name as the student's interest."""

from __future__ import annotations

ARTS = "Arts & Humanities"
ENG = "Engineering & Technology"
LIFE = "Life Sciences & Medicine"
NAT = "Natural Sciences"
SOC = "Social Sciences & Management"
QS_AREAS = (ARTS, ENG, LIFE, NAT, SOC)
