"""/monitor in headless Chromium: the page asks for the admin token, follows the presence stream
through EventSource, and shows rooms and groups with live counts and a chosen group's online list
(docs/operations.md, "The monitor page")."""

import urllib.request

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from chat_client import group_with, signup
from chromium import open_chromium
from conftest import PATIENCE, connect
from sse_client import ADMIN_TOKEN, admin_server


def rows(browser, table):
    """The table's cells as text, read in one script: the page redraws as events arrive, so
    elements found one by one could be replaced in between."""
    return browser.execute_script(
        "return [...document.querySelectorAll(arguments[0])].map(r => [...r.cells].map(c => c.textContent))",
        f"#{table} tr")


def test_the_monitor_follows_rooms_and_groups_live(start_server):
    server = admin_server(start_server)
    with urllib.request.urlopen(server.http + "/monitor", timeout=PATIENCE) as response:
        assert "default-src 'self'" in response.headers["Content-Security-Policy"]
        assert response.headers["X-Content-Type-Options"] == "nosniff"
    alice, _, alice_user = signup(server, "alice")
    bob, _, _ = signup(server, "bob")
    group = group_with(alice, bob, name="Team")
    browser = open_chromium()
    try:
        wait = WebDriverWait(browser, PATIENCE)
        browser.get(server.http + "/monitor")
        browser.find_element(By.ID, "token").send_keys(ADMIN_TOKEN)
        browser.find_element(By.ID, "connect").click()
        wait.until(lambda b: b.find_element(By.ID, "status").text == "Live.")

        with connect(server.ws + "/rooms/lobby?name=ann&notices=0"):
            wait.until(lambda b: ["lobby", "1"] in rows(b, "rooms"))
            alice.subscribe(group)
            wait.until(lambda b: ["Team", "1"] in rows(b, "groups"))
            browser.execute_script("document.querySelector('#groups tr').click()")
            wait.until(lambda b: b.execute_script(
                "return [...document.querySelectorAll('#online-list li')].map(li => li.textContent)") == [alice_user["id"]])
        wait.until(lambda b: not any(row[0] == "lobby" for row in rows(b, "rooms")))
        wait.until(lambda b: ["room", "0"] in rows(b, "connections") and ["chat", "2"] in rows(b, "connections"))
    finally:
        browser.quit()


def test_the_monitor_says_when_the_token_is_refused(start_server):
    server = admin_server(start_server)
    browser = open_chromium()
    try:
        browser.get(server.http + "/monitor")
        browser.find_element(By.ID, "token").send_keys("not-the-admin-token-but-long-enough")
        browser.find_element(By.ID, "connect").click()
        WebDriverWait(browser, PATIENCE).until(
            lambda b: b.find_element(By.ID, "status").text == "the admin token was refused")
    finally:
        browser.quit()
