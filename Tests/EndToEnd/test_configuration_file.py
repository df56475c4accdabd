"""Config/switchboard.json is where the README sends readers for every setting and its default
(README, "Configuration"), and the container image ships it as the defaults: it lists every
setting the binary knows (Sources/switchboard/Setting.swift, `Setting.all`), in that order,
and the README names each one."""

import json
import os
import re

from conftest import ROOT


def known_settings():
    source = open(os.path.join(ROOT, "Sources", "switchboard", "Setting.swift")).read()
    listing = source.split("static let all: [Setting] = [", 1)[1].split("\n    ]", 1)[0]
    return re.findall(r'^\s+\.\w+\("(\w+)"', listing, re.M)


def test_the_configuration_file_lists_every_setting_in_order():
    settings = known_settings()
    assert len(settings) > 50
    with open(os.path.join(ROOT, "Config", "switchboard.json")) as file:
        listed = list(json.load(file))
    assert listed == settings


def test_the_readme_names_every_setting():
    readme = open(os.path.join(ROOT, "README.md")).read()
    assert [name for name in known_settings() if f"`{name}`" not in readme] == []
