import pytest

from fairness_assets.core.understanding import tags as T
from resources.tagger import OVERRIDES_FILE


@pytest.mark.parametrize(
    "program,areas",
    [
        ("MSc Computer Science", {T.ENG}),
        ("Master of Public Health", {T.LIFE}),
        ("MBA", {T.SOC}),
        ("MA in History", {T.ARTS}),
        ("MSc Physics", {T.NAT}),
        ("Biomedical Engineering", {T.ENG, T.LIFE}),
        ("Mestrado em Engenharia Civil", {T.ENG}),
        ("Maestría en Economía", {T.SOC}),
        ("LLM in International Law", {T.SOC}),
        ("Mechanical Design", {T.ENG}),
        ("Business Analytics", {T.SOC}),
        ("Software Development", {T.ENG}),
        ("Sports Management", {T.SOC}),
        ("Transport Engineering", {T.ENG}),
        ("Quantum Widgets", set()),
        (None, set()),
        ("", set()),
    ],
)
def test_rules(program, areas):
    assert set(T.tag_rules(program)) == areas


@pytest.mark.parametrize(
    "a,b",
    [
        ("MSc in Computer Science", "Master of Science (Computer Science)"),
        ("M.Sc. Computer Science", "computer science"),
        ("Master's in Public Health", "Master of Public Health"),
    ],
)
def test_normalized_names_share_a_key(a, b):
    assert T.normalize_program(a) == T.normalize_program(b) != ""


def test_overrides_file_is_valid_and_wins():
    o = T.load_overrides(OVERRIDES_FILE)
    assert o[T.normalize_program("Food Technology")] == (T.LIFE,)
    assert o[T.normalize_program("MSc Data Science")] == (T.ENG,)


def test_bad_override_names_the_line(tmp_path):
    p = tmp_path / "o.csv"
    p.write_text("program,areas\nFoo,Alchemy\n")
    with pytest.raises(ValueError, match="line 2"):
        T.load_overrides(p)


def test_llm_prompt_and_answers():
    chat = T.few_shot_prompt("MSc Robotics")
    assert chat[0]["role"] == "system" and "Natural Sciences" in chat[0]["content"]
    assert chat[-1] == {"role": "user", "content": "MSc Robotics"}
    assert {"role": "assistant", "content": '["Engineering & Technology", "Life Sciences & Medicine"]'} in chat
    assert T.parse_llm_tags(' ["Engineering & Technology", "Life Sciences and Medicine"]\n\nProgram: x') == (
        T.ENG,
        T.LIFE,
    )
    assert T.parse_llm_tags("Natural Sciences") == (T.NAT,)
    assert T.parse_llm_tags("I think it is about robots") is None
    assert T.parse_llm_tags(None) is None
