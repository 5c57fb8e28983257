"""The relay's metrics: children bound once must count exactly like ``labels(...).inc()``."""

from __future__ import annotations

from proxy.metrics import Metrics


def test_count_request_accumulates_per_channel_and_status() -> None:
    metrics = Metrics(channels=["slack"])
    metrics.count_request("api", "200")
    metrics.count_request("api", "200")
    metrics.count_request("slack", "200")
    metrics.count_request("api", "502")
    text = metrics.render().decode()
    assert 'chronorelay_requests_total{channel="api",status="200"} 2.0' in text
    assert 'chronorelay_requests_total{channel="slack",status="200"} 1.0' in text
    assert 'chronorelay_requests_total{channel="api",status="502"} 1.0' in text


def test_cached_child_is_the_exposed_one() -> None:
    metrics = Metrics()
    metrics.count_request("api", "200")
    # Whoever uses labels() directly adds to the same series as the cached child.
    metrics.requests.labels("api", "200").inc()
    metrics.count_request("api", "200")
    assert 'status="200"} 3.0' in metrics.render().decode()


def test_error_series_appear_only_once_counted() -> None:
    metrics = Metrics()
    assert "chronorelay_errors_total{" not in metrics.render().decode()
    assert "chronorelay_requests_total{" not in metrics.render().decode()
    metrics.count_error("upstream")
    metrics.count_error("upstream")
    metrics.count_error("upstream_status")
    text = metrics.render().decode()
    assert 'chronorelay_errors_total{kind="upstream"} 2.0' in text
    assert 'chronorelay_errors_total{kind="upstream_status"} 1.0' in text


def test_each_app_counts_in_its_own_registry() -> None:
    first, second = Metrics(), Metrics()
    first.count_request("api", "200")
    assert 'status="200"} 1.0' in first.render().decode()
    assert "chronorelay_requests_total{" not in second.render().decode()


def test_names_a_client_makes_up_share_one_series_and_one_child() -> None:
    metrics = Metrics()
    for n in range(50):
        metrics.count_request(f"made-up-{n}", "200")
    assert (
        'chronorelay_requests_total{channel="other",status="200"} 50.0' in metrics.render().decode()
    )
    assert len(metrics._request_children) == 1  # nothing kept per made-up name


def test_admin_requests_are_labelled_by_method_route_and_status() -> None:
    metrics = Metrics()
    assert "chronorelay_admin_requests_total{" not in metrics.render().decode()
    metrics.count_admin_request("GET", "/admin/users/{user_key}", 404)
    metrics.count_admin_request("GET", "/admin/users/{user_key}", 404)
    text = metrics.render().decode()
    assert (
        'chronorelay_admin_requests_total{method="GET",route="/admin/users/{user_key}",'
        'status="404"} 2.0'
    ) in text
