"""The browser app at / (Public/), in headless Chromium: two people chatting through an invite
link, presence after a browser dies, history paging, reconnecting across a server restart, and
other people's text shown as text."""

import signal

import pytest

from app_page import AppPage
from chat_client import connect_as, group_with, send_many, signup
from conftest import PATIENCE
from test_chat_crash import full_history

# History and the reconnect test send faster than the default per-connection rate.
FAST = {"SWITCHBOARD_MESSAGES_PER_SECOND": "1000000", "SWITCHBOARD_USER_MESSAGES_PER_SECOND": "1000000"}


@pytest.fixture
def pages():
    """Opens AppPages on demand and closes every one at the end of the test."""
    opened = []

    def open_page(server, **size):
        page = AppPage(server, **size)
        opened.append(page)
        return page

    yield open_page
    for page in opened:
        page.quit()


def test_two_people_chat_through_an_invite_link(server, pages):
    ada = pages(server)
    ada.open("/")
    ada.sign_up("Ada")
    ada.find("#open-new-group").click()
    ada.find("#new-group-form input[name=name]").send_keys("Engines\n")
    ada.wait(lambda _: ada.find("#conversation-title").text == "Engines")
    ada.find("#invite").click()
    link = ada.wait(lambda _: ada.find("#invite-link").get_attribute("value"))
    assert link.startswith(server.http + "/join/")
    ada.find("#invite-dialog button.secondary").click()

    bea = pages(server)
    bea.open(link[len(server.http):])
    assert bea.find("#auth-invite").is_displayed()
    bea.sign_up("Bea")
    bea.wait(lambda _: bea.find("#conversation-title").text == "Engines", message="the invite did not open the group")
    assert bea.browser.current_url == server.http + "/"

    # Both see each other online, and the messages both ways.
    ada.wait(lambda _: len(ada.find_all('#members li[data-online="true"]')) == 2)
    ada.send("hello Bea")
    bea.wait_for_text("hello Bea")
    bea.send("hi Ada")
    ada.wait_for_text("hi Ada")
    # Bea had the conversation open, so Ada's message shows as read; Bea's own is delivered.
    ada.wait(lambda _: ada.find_all('.message.mine [data-status="read"]'), message="no read receipt")
    bea.wait(lambda _: bea.find_all('.message.mine [data-status]'))
    # Typing shows on the other side. The indicator lasts 4 s, which a stalled machine could
    # let pass between two polls: Ada's page records that it showed.
    ada.script("""
        const typing = document.getElementById("typing");
        new MutationObserver(() => { if (typing.textContent === "Bea is typing…") window.sawBeaTyping = true; })
            .observe(typing, { childList: true, characterData: true, subtree: true });""")
    bea.find("#message-input").send_keys("typing a long")
    ada.wait(lambda _: ada.script("return window.sawBeaTyping === true"), message="no typing indicator")
    assert ada.message_texts() == ["hello Bea", "hi Ada"]
    assert bea.message_texts() == ["hello Bea", "hi Ada"]


def test_a_killed_browser_goes_offline_for_the_others(server, pages):
    ada_client, ada_token, _ = signup(server, "Ada")
    bea_client, bea_token, bea = signup(server, "Bea")
    group = group_with(ada_client, bea_client)
    ada = pages(server)
    ada.open(token=ada_token)
    ada.open_conversation(group)
    other = pages(server)
    other.open(token=bea_token)
    other.open_conversation(group)
    ada.wait(lambda _: ada.member_online(bea["id"]) == "true", message="Bea never showed online")
    other.kill()
    # The server's idle timeout here is 3 s; a killed process's sockets close sooner.
    ada.wait(lambda _: ada.member_online(bea["id"]) == "false", message="Bea still shows online")
    assert "1 online" in ada.find("#conversation-online").text


def test_the_app_and_the_client_library_sign_out_when_the_token_expires(start_server, pages):
    lifetime = 15
    server = start_server(env={"SWITCHBOARD_TOKEN_LIFETIME": str(lifetime)})
    # Both browsers start before the first token is issued: a slow start must not eat into it.
    ada = pages(server)
    bea = pages(server)
    bea.browser.get(server.http + "/favicon.svg")
    ada.open("/")
    ada.sign_up("Ada")
    # switchboard.js alone, signed in by a token, making no request of its own after: only the
    # token's expiry can tell it (the server signs the connection out silently).
    _, bea_token, _ = signup(server, "Bea")
    bea.script("""
        window.signedOut = null;
        import("/switchboard.js").then(({ connect }) => {
            const sb = connect({ storage: null, token: arguments[0] });
            sb.on("auth", () => { window.signedIn = true; });
            sb.on("signedout", (reason) => { window.signedOut = reason; });
        });""", bea_token)
    bea.wait(lambda _: bea.script("return window.signedIn === true"), message="the library did not sign in")
    bea.wait(lambda _: bea.script("return window.signedOut"), timeout=lifetime + PATIENCE,
             message="the library stayed signed in past its token's expiry")
    assert bea.script("return window.signedOut") == "expired"
    # The app, left alone, shows the sign-in form again and forgets the token.
    ada.wait(lambda _: ada.view() == "auth", timeout=lifetime + PATIENCE,
             message="the app stayed signed in past its token's expiry")
    assert ada.script("return localStorage.getItem('switchboard.token')") is None


def test_a_device_clock_ahead_of_the_server_does_not_sign_the_library_out_early(start_server, pages):
    lifetime = 15
    server = start_server(env={"SWITCHBOARD_TOKEN_LIFETIME": str(lifetime)})
    page = pages(server)
    page.browser.get(server.http + "/favicon.svg")
    _, token, _ = signup(server, "Ada")
    # This page's clock runs a day ahead: by it, the token expired long ago. The requests the
    # library sends are recorded.
    page.script("""
        const realNow = Date.now.bind(Date);
        Date.now = () => realNow() + 86400000;
        window.sentOps = [];
        const send = WebSocket.prototype.send;
        WebSocket.prototype.send = function (data) { window.sentOps.push(JSON.parse(data).op); return send.call(this, data); };
        window.signedOut = null;
        import("/switchboard.js").then(({ connect }) => {
            window.sb = connect({ storage: null, token: arguments[0] });
            sb.on("signedout", (reason) => { window.signedOut = reason; });
        });""", token)
    page.wait(lambda _: page.script("return window.signedOut !== null || window.sentOps.includes('profile')"),
              message="the library neither signed out nor asked the server about its token")
    assert page.script("return window.signedOut") is None, "signed out by the device's clock alone"
    # The server answers in order: once a later request is answered, so is the question.
    groups = page.browser.execute_async_script("""
        const done = arguments[arguments.length - 1];
        sb.request("groups").then((reply) => done(reply.groups), (error) => done(error.code));""")
    assert groups == []
    assert page.script("return [window.signedOut, sb.user && sb.user.name]") == [None, "Ada"]
    # At the server's expiry the library signs out on its own, having asked again.
    page.wait(lambda _: page.script("return window.signedOut"), timeout=lifetime + PATIENCE,
              message="the library stayed signed in past its token's expiry")
    assert page.script("return window.signedOut") == "expired"
    assert page.script("return window.sentOps.filter((op) => op === 'profile').length") >= 2


def test_scrolling_up_pages_through_all_of_a_long_history(start_server, pages):
    server = start_server(env=FAST)
    client, token, _ = signup(server, "Ada")
    group = group_with(client, name="long")
    texts = [f"history {index:03d}" for index in range(520)]
    send_many(client, group, texts)
    page = pages(server, height=700)
    page.open(token=token)
    page.open_conversation(group)
    page.wait(lambda _: len(page.message_texts()) == 50)
    while page.script("return document.querySelector('#messages .older') !== null"):
        shown = len(page.message_texts())
        page.script("document.getElementById('messages').scrollTop = 0")
        page.wait(lambda _: len(page.message_texts()) > shown, message=f"scrolling up past {shown} loaded nothing")
    assert page.message_texts() == texts


def test_the_app_reconnects_after_a_restart_and_shows_every_message_once(start_server, pages):
    server = start_server(env=FAST)
    sender, token, _ = signup(server, "Sender")
    reader_client, reader_token, _ = signup(server, "Reader")
    group = group_with(sender, reader_client)
    reader_client.close()
    page = pages(server)
    page.open(token=reader_token)
    page.open_conversation(group)

    texts = [f"numbered {index:02d}" for index in range(50)]
    send_many(sender, group, texts[:20], prefix="a")
    page.wait_for_text(texts[19])
    port, data = server.port, server.data
    server.stop(signal.SIGTERM)
    sender.close()
    page.wait(lambda _: page.connection() == "offline", message="the app did not notice the server stopped")
    # Typed while offline: it goes out once the connection is back.
    page.send("sent while offline")

    server = start_server("--port", str(port), data=data, env=FAST)
    sender = connect_as(server, token)
    send_many(sender, group, texts[20:], prefix="b")
    page.wait(lambda _: page.connection() == "online", message="the app did not reconnect")
    page.wait(lambda _: {texts[-1], "sent while offline"} <= set(page.message_texts()),
              message="the last message never showed")
    shown = [text for text in page.message_texts() if text != "sent while offline"]
    assert shown == texts
    page.wait(lambda _: page.find_all('.message.mine [data-status="delivered"]'), message="the offline message was not sent")
    stored = [m["text"] for m in full_history(sender, group)]
    assert stored.count("sent while offline") == 1
    assert [text for text in stored if text != "sent while offline"] == texts


XSS_NAME = '<img src=x onerror="window.__xss=1">'
XSS_TEXT = '<script>window.__xss=2</script><b onmouseover=window.__xss=3>bold</b>'
XSS_IMAGE = 'https://example.invalid/a.png"><img/src=x/onerror=window.__xss=4>'


def test_markup_from_other_people_is_shown_as_text(server, pages):
    mallory, _, _ = signup(server, "Mallory")
    assert mallory.ok("profile", name=XSS_NAME)["user"]["name"] == XSS_NAME
    assert mallory.code("profile", avatar="javascript:window.__xss=5") == "bad_request"
    ada_client, ada_token, _ = signup(server, "Ada")
    group = group_with(ada_client, mallory, name='<i>group</i>')
    mallory.send_text(group, XSS_TEXT)
    assert mallory.code("send", group=group, imageUrl="javascript:window.__xss=6") == "bad_request"
    mallory.ok("send", group=group, imageUrl=XSS_IMAGE)

    page = pages(server)
    page.open(token=ada_token)
    page.open_conversation(group)
    page.wait(lambda _: page.find_all("#messages .message img"))
    assert page.message_texts() == [XSS_TEXT]
    assert page.find("#conversation-title").text == "<i>group</i>"
    assert XSS_NAME in page.all_of("#messages .author", "textContent")
    assert any(XSS_NAME in text for text in page.all_of("#members li", "textContent"))
    assert page.all_of("#messages .bubble img", "src") == [
        "https://example.invalid/a.png%22%3E%3Cimg/src=x/onerror=window.__xss=4%3E"]
    assert page.find_all("#messages script, #messages b, #conversation-title i") == []
    assert page.script("return window.__xss === undefined")


def test_the_console_page_talks_to_echo(server, pages):
    page = pages(server)
    page.browser.get(server.http + "/console.html")
    page.find("[data-path='/echo']").click()
    page.find("#connect").click()
    page.wait(lambda _: page.find("#line").is_enabled())
    page.find("#line").send_keys("ping <b>\n")
    page.wait(lambda _: "ping <b>" in [e.text for e in page.find_all("#log .in")])
