"""The browser app (Public/) driven in headless Chromium: one `AppPage` per browser session, with
the steps the tests take (sign up, open a conversation, send) and conditions to wait on. Every wait
is a WebDriverWait on what the page shows, never a sleep."""

import os
import signal

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from chat_client import PASSWORD, unique_email
from chromium import open_chromium
from conftest import PATIENCE


class AppPage:
    """One Chromium window on the app of `server`."""

    def __init__(self, server, width=1280, height=900):
        self.server = server
        self.browser = open_chromium()
        self.browser.set_window_size(width, height)

    def wait(self, condition, timeout=PATIENCE, message=""):
        """Waits until `condition(browser)` is truthy and returns its value."""
        return WebDriverWait(self.browser, timeout, poll_frequency=0.05).until(condition, message)

    def find(self, css):
        return self.browser.find_element(By.CSS_SELECTOR, css)

    def find_all(self, css):
        return self.browser.find_elements(By.CSS_SELECTOR, css)

    def script(self, source, *args):
        return self.browser.execute_script(source, *args)

    def view(self):
        return self.find("body").get_attribute("data-view")

    def connection(self):
        return self.find("body").get_attribute("data-connection")

    # Getting in.

    def open(self, path="/", token=None):
        """Loads `path`; with `token`, signed in as that user (the token the app keeps)."""
        if token is not None:
            self.browser.get(self.server.http + "/favicon.svg")
            self.script("localStorage.setItem('switchboard.token', arguments[0])", token)
        self.browser.get(self.server.http + path)
        expected = "app" if token is not None else "auth"
        self.wait(lambda _: self.view() == expected, message=f"the app did not show {expected}")
        if token is not None:
            self.wait(lambda _: self.connection() == "online", message="the app did not come online")

    def sign_up(self, name):
        """Signs up through the form; returns the email used."""
        email = unique_email(name)
        self.find("#tab-signup").click()
        form = self.find("#auth-form")
        form.find_element(By.NAME, "name").send_keys(name)
        form.find_element(By.NAME, "email").send_keys(email)
        form.find_element(By.NAME, "password").send_keys(PASSWORD + Keys.ENTER)
        self.wait(lambda _: self.view() == "app", message="signup did not reach the app")
        return email

    # Conversations.

    def open_conversation(self, group):
        self.wait(lambda _: self.find_all(f'[data-group="{group}"]'), message=f"{group} is not listed")
        self.find(f'[data-group="{group}"]').click()
        self.wait(lambda _: self.script("return !document.getElementById('composer').hidden"))

    def send(self, text):
        self.find("#message-input").send_keys(text + Keys.ENTER)

    def message_texts(self):
        """The texts of the messages shown, top to bottom."""
        return self.script(
            "return [...document.querySelectorAll('#messages .message .text')].map(e => e.textContent)")

    def all_of(self, css, what):
        """`what` ("textContent" or an attribute name) of every element matching `css`, read in
        one script so that a redraw between finding and reading cannot interfere."""
        return self.script("return [...document.querySelectorAll(arguments[0])]"
                           ".map(e => arguments[1] === 'textContent' ? e.textContent : e.getAttribute(arguments[1]))",
                           css, what)

    def wait_for_text(self, text, timeout=PATIENCE):
        self.wait(lambda _: text in self.message_texts(), timeout, f"{text!r} never showed")

    def member_online(self, user_id):
        """'true' or 'false' from the member chip of `user_id`, or None when not shown."""
        return self.script("return document.querySelector(`#members li[data-user=\"${arguments[0]}\"]`)?.dataset.online ?? null",
                           user_id)

    # Ending.

    def quit(self):
        try:
            self.browser.quit()
        except Exception:
            pass

    def kill(self):
        """Ends Chromium with SIGKILL, as a crash or a pulled plug would: no close, no unload."""
        for pid in descendants(self.browser.service.process.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.browser.service.process.kill()
        self.browser.service.process.wait()


def descendants(pid):
    """Every process below `pid`, from /proc."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                parent = int(stat.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry))
    found, stack = [], [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found
