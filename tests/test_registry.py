"""The one generic registry (hindcast.registry.Registry) behind forecasters, embedders and leak
detectors: names → factories, plugins of an entry-point group loaded on look-up, each name's
origin kept; the three kinds keep their own messages (asserted by their own tests)."""

from __future__ import annotations

import pytest

from hindcast.archive import embed
from hindcast.errors import ConfigError
from hindcast.forecasters import registry as forecasters
from hindcast.leaks import registry as leaks
from hindcast.registry import Registry


def test_the_three_kinds_share_one_registry_type():
    assert isinstance(forecasters._FACTORIES, Registry)
    assert isinstance(embed._FACTORIES, Registry)
    assert isinstance(leaks._FACTORIES, Registry)
    assert forecasters._FACTORIES.group == "hindcast.forecasters"
    assert embed._FACTORIES.group == "hindcast.embedders" and leaks._FACTORIES.group is None
    assert {"market", "constant"} <= set(forecasters.names())
    assert "lexical" in leaks.names() and "minilm" in embed.names()


def test_register_find_names_origin_and_copy():
    made: Registry[int] = Registry()
    assert made.find("a") is None and made.names() == [] and len(made) == 0
    made.register("b", 2, origin="built-in")
    made["a"] = 1
    assert made.find("a") == 1 and made["b"] == 2 and made.names() == ["a", "b"]
    assert (made.origin("a"), made.origin("b"), made.origin("nope")) == (
        "registered",
        "built-in",
        "registered",
    )
    other = made.copy()
    other.register("c", 3)
    del other["a"]
    assert made.names() == ["a", "b"] and other.names() == ["b", "c"]
    with pytest.raises(KeyError):
        made["c"]


def test_a_plugin_of_the_group_is_registered_on_look_up_with_its_origin(tmp_path, monkeypatch):
    (tmp_path / "toy_registry_plugin.py").write_text("def factory():\n    return 42\n")
    dist = tmp_path / "toy_registry_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: toy-registry-plugin\nVersion: 0.1\n"
    )
    (dist / "entry_points.txt").write_text(
        "[hindcast.toy-kind]\ntoy = toy_registry_plugin:factory\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    made: Registry = Registry("hindcast.toy-kind")
    made.register("own", lambda: 1)
    found = made.find("toy")
    assert found is not None and found() == 42
    assert made.origin("toy") == "plugin toy_registry_plugin:factory"
    assert made.names() == ["own", "toy"]
    made.register("toy", lambda: 7)  # a registration in code is not replaced by the plugin
    assert made.find("toy")() == 7


def test_the_unknown_name_messages_stay_each_kinds_own():
    with pytest.raises(ConfigError, match=r"^unknown forecaster 'nope'; known: "):
        forecasters.factory("nope")
    with pytest.raises(ConfigError, match=r"^unknown leak detector 'nope': use one of "):
        leaks.get_detector("nope")
