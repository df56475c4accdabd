// Small DOM helpers for the app. Everything from other people goes in as text (textContent) or
// as an attribute value of an element made here, never as HTML, so a name or message such as
// `<img src=x onerror=...>` shows those characters.

/**
 * An element with attributes (strings; `class` and `data-*` included) and children (nodes or text).
 *
 * @param {string} tag
 * @param {Record<string, string|boolean|undefined>} [attributes]
 * @param {...(Node|string|null|undefined|false)} children
 * @returns {HTMLElement}
 */
export function el(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    element.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child);
  }
  return element;
}

/**
 * The URL when it is http(s), else null: `javascript:` and `data:` URLs never reach a `src`.
 *
 * @param {string|null|undefined} url
 * @returns {string|null}
 */
export function safeImageURL(url) {
  if (typeof url !== "string") return null;
  try {
    const parsed = new URL(url);
    return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed.href : null;
  } catch {
    return null;
  }
}

/** A hue from an id, so a person keeps one colour everywhere. */
function hue(id) {
  let hash = 0;
  for (const char of id ?? "") hash = (hash * 31 + char.charCodeAt(0)) % 360;
  return hash;
}

/**
 * A round avatar: the picture when the URL is http(s), else initials on a colour.
 *
 * @param {{id?: string, name?: string, avatar?: string|null}} who
 * @param {string} [size] `small`, `large` or empty
 * @returns {HTMLElement}
 */
export function avatar(who, size = "") {
  const name = who?.name ?? "?";
  const url = safeImageURL(who?.avatar);
  const box = el("span", { class: `avatar ${size}`.trim(), "aria-hidden": "true" });
  box.style.setProperty("--hue", String(hue(who?.id ?? name)));
  const initials = name.trim().split(/\s+/).slice(0, 2).map((word) => [...word][0] ?? "").join("").toUpperCase();
  box.textContent = initials || "?";
  if (url) {
    const image = el("img", { src: url, alt: "", loading: "lazy", referrerpolicy: "no-referrer" });
    image.addEventListener("error", () => image.remove());
    box.append(image);
  }
  return box;
}

/**
 * A message time: the clock time today, else the date and time.
 *
 * @param {number} milliseconds
 * @returns {string}
 */
export function formatTime(milliseconds) {
  const date = new Date(milliseconds);
  const now = new Date();
  const time = date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  if (date.toDateString() === now.toDateString()) return time;
  return `${date.toLocaleDateString([], { month: "short", day: "numeric" })} ${time}`;
}

/**
 * Shows `dialog` modally; buttons marked `data-close` close it.
 *
 * @param {HTMLDialogElement} dialog
 */
export function openDialog(dialog) {
  for (const button of dialog.querySelectorAll("[data-close]")) button.onclick = () => dialog.close();
  for (const error of dialog.querySelectorAll(".error")) error.textContent = "";
  dialog.showModal();
}
