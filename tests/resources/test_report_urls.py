"""Where the report links of the UI point (issue 23.1): the local report server of
`fairness-audit ui` on FAIRNESS_REPORT_PORT, or a deployment's FAIRNESS_REPORT_BASE_URL."""

import pytest

from resources.settings import ConfigError, ReportResource, load_settings


def test_links_point_to_the_local_report_server_by_default(tmp_path):
    r = ReportResource(output_dir=str(tmp_path / "reports"))
    assert r.base() == "http://127.0.0.1:3080"
    assert (
        r.url_of(tmp_path / "reports" / "report-1a2b" / "report.html")
        == "http://127.0.0.1:3080/report-1a2b/report.html"
    )
    assert (
        ReportResource(output_dir=str(tmp_path), port=4567).url_of(tmp_path / "figures" / "m__base__map.png")
        == "http://127.0.0.1:4567/figures/m__base__map.png"
    )


def test_a_base_url_replaces_the_server_and_paths_are_encoded(tmp_path):
    r = ReportResource(output_dir=str(tmp_path), base_url="https://reports.example.org/fairness/", port=4567)
    assert r.base() == "https://reports.example.org/fairness"
    assert (
        r.url_of(tmp_path / "figures" / "a b#c?.png") == "https://reports.example.org/fairness/figures/a%20b%23c%3F.png"
    )


def test_a_path_outside_the_reports_folder_has_no_link(tmp_path):
    r = ReportResource(output_dir=str(tmp_path / "reports"))
    with pytest.raises(ValueError, match="not under the reports folder"):
        r.url_of(tmp_path / "elsewhere" / "report.html")
    with pytest.raises(ValueError, match="not under the reports folder"):
        r.url_of(tmp_path / "reports" / ".." / "secret.txt")


@pytest.mark.parametrize(
    "bad", ["reports.example.org", "ftp://reports.example.org", "https://", "https://x.org/?a=1", "https://x.org/r#top"]
)
def test_a_bad_base_url_is_named(monkeypatch, bad):
    with pytest.raises(ConfigError, match="FAIRNESS_REPORT_BASE_URL"):
        ReportResource(base_url=bad).base()
    monkeypatch.setenv("FAIRNESS_REPORT_BASE_URL", bad)
    with pytest.raises(ConfigError, match="FAIRNESS_REPORT_BASE_URL"):
        load_settings()


@pytest.mark.parametrize("bad", ["0", "70000", "http"])
def test_a_bad_port_is_named(monkeypatch, bad):
    monkeypatch.setenv("FAIRNESS_REPORT_PORT", bad)
    with pytest.raises(ConfigError, match="FAIRNESS_REPORT_PORT"):
        load_settings()


def test_the_settings_reach_the_resource_when_a_run_starts(monkeypatch, tmp_path):
    import dagster as dg

    from fairness_assets.definitions import build_resources

    monkeypatch.setenv("FAIRNESS_REPORTS_DIR", str(tmp_path))
    monkeypatch.setenv("FAIRNESS_REPORT_PORT", "4999")
    resource = build_resources(load_settings())["report_settings"]

    @dg.asset
    def link(report_settings: ReportResource) -> str:
        return report_settings.url_of(report_settings.folder() / "report-x" / "report.html")

    result = dg.materialize([link], resources={"report_settings": resource})
    assert result.output_for_node("link") == "http://127.0.0.1:4999/report-x/report.html"
    monkeypatch.setenv("FAIRNESS_REPORT_BASE_URL", "https://r.example.org/a")
    result = dg.materialize([link], resources={"report_settings": build_resources(load_settings())["report_settings"]})
    assert result.output_for_node("link") == "https://r.example.org/a/report-x/report.html"


def test_a_base_url_with_credentials_is_refused_without_echoing_them(monkeypatch):
    """The report links are shown in the UI: a password in the base URL would be shown to every reader."""
    url = "https://ana:Secret99@reports.example.org/fairness"
    monkeypatch.setenv("FAIRNESS_REPORT_BASE_URL", url)
    with pytest.raises(ConfigError, match="FAIRNESS_REPORT_BASE_URL") as err:
        load_settings()
    assert "reports.example.org" in str(err.value) and "Secret99" not in str(err.value)
    with pytest.raises(ConfigError) as err:
        ReportResource(base_url=url).base()
    assert "Secret99" not in str(err.value)
