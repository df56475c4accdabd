"""Headless Chromium through selenium (apt chromium chromium-driver, pip selenium), and the page
scripts the browser tests run: an echo of 300 messages of up to 5 KB, and 100 messages between
two sockets of one room (over 128 bytes each, so they are compressed). Each calls back with what it saw."""

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service

from conftest import PATIENCE


def open_chromium():
    """A headless Chromium that accepts the tests' self-signed certificates; quit() it after."""
    options = Options()
    options.binary_location = "/usr/bin/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--ignore-certificate-errors"]:
        options.add_argument(argument)
    browser = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    browser.set_script_timeout(PATIENCE)
    return browser


CHROMIUM_ECHO = """
const done = arguments[arguments.length - 1];
const ws = new WebSocket(arguments[0] + '/echo');
const sent = [], got = [];
ws.onopen = () => {
  for (let i = 0; i < 300; i++) { const m = 'msg ' + i + ' ' + 'chat text '.repeat(i * 37 % 500); sent.push(m); ws.send(m); }
};
ws.onmessage = (event) => {
  got.push(event.data);
  if (got.length === sent.length) { ws.close(1000); done({same: got.every((m, i) => m === sent[i]), count: got.length, extensions: ws.extensions}); }
};
ws.onerror = () => done({error: 'the WebSocket failed'});
"""

CHROMIUM_ROOM = """
const done = arguments[arguments.length - 1];
const url = arguments[0] + '/rooms/browsers?notices=0';
const a = new WebSocket(url), b = new WebSocket(url);
let open = 0;
const got = [];
const message = (i) => 'room message ' + i + ' ' + 'chat text '.repeat(20);
const start = () => { if (++open === 2) for (let i = 0; i < 100; i++) a.send(message(i)); };
a.onopen = start;
b.onopen = start;
b.onmessage = (event) => { got.push(event.data); if (got.length === 100) done({same: got.every((m, i) => m === message(i))}); };
a.onerror = b.onerror = () => done({error: 'a WebSocket failed'});
"""
