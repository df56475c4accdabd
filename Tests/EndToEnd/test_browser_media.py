"""Media in the browser app (Public/): Chromium uploads a picture into a conversation and as an
avatar, and shows both from /media/ under the app's Content-Security-Policy."""

from app_page import AppPage
from chat_client import group_with, signup
from conftest import PATIENCE
from media_client import png

LOADED = "return [...document.querySelectorAll(arguments[0])].some(i => i.complete && i.naturalWidth === arguments[1] && new URL(i.src).pathname.startsWith('/media/'))"


def test_an_uploaded_image_shows_in_the_conversation_and_as_the_avatar(server, tmp_path):
    ada_client, ada_token, _ = signup(server, "Ada")
    bea, _, _ = signup(server, "Bea")
    group = group_with(ada_client, bea)
    bea.subscribe(group)
    picture = tmp_path / "engine.png"
    picture.write_bytes(png(width=12, height=12, seed=7))
    page = AppPage(server)
    try:
        page.open(token=ada_token)
        page.open_conversation(group)
        page.find("#attach").click()
        page.find("#image-form input[name=file]").send_keys(str(picture))
        page.find("#image-form button.primary").click()
        # Shown inline once stored: the browser fetched /media/<id> and decoded a 12-pixel image.
        page.wait(lambda _: page.script(LOADED, "#messages .message img", 12), PATIENCE, "the uploaded image never showed")
        message = bea.expect_event("message", group=group)["message"]
        assert message["imageUrl"].startswith("/media/") and message["user"] == ada_client.user["id"]
        page.find("#me").click()
        page.find("#profile-form input[name=picture]").send_keys(str(picture))
        page.find("#profile-form button.primary").click()
        page.wait(lambda _: page.script(LOADED, "#me img", 12), PATIENCE, "the uploaded avatar never showed")
        assert ada_client.ok("users")["users"][0]["avatar"].startswith("/media/")
    finally:
        page.quit()
