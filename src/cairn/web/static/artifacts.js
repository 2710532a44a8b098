// The Artifacts tab: the session's and the user's artifacts with their versions, a preview
// (text, JSON, images; other types by name, type and size), download of any version, and
// upload of a file as a new version (recorded in the log as an event naming it).

import { api } from "./api.js";
import { h, pretty } from "./dom.js";
import { dateTime } from "./model.js";
import { saveError } from "./state_edit.js";

/** The bytes of base64 text, standard or URL-safe (the server sends URL-safe). */
export function fromBase64(text) {
  const standard = text.replace(/-/g, "+").replace(/_/g, "/");
  const padded = standard + "=".repeat((4 - (standard.length % 4)) % 4);
  const binary = atob(padded);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** {mimeType, bytes, text?} of an artifact version's Part. */
export function contentOf(part) {
  if (typeof part?.text === "string") {
    return { mimeType: "text/plain", bytes: new TextEncoder().encode(part.text), text: part.text };
  }
  const blob = part?.inlineData || {};
  const bytes = fromBase64(blob.data || "");
  const mimeType = blob.mimeType || "application/octet-stream";
  const textual = /^text\/|[/+]json$|^application\/(xml|javascript|x-yaml|yaml)$/.test(mimeType);
  return { mimeType, bytes, text: textual ? new TextDecoder().decode(bytes) : undefined };
}

export function size(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

function isJson(name, mimeType) {
  return /[/+]json$/.test(mimeType) || name.toLowerCase().endsWith(".json");
}

function preview(name, content) {
  const { mimeType, bytes, text } = content;
  if (mimeType.startsWith("image/")) {
    const url = URL.createObjectURL(new Blob([bytes], { type: mimeType }));
    return h("img", { class: "artifact-image", src: url, alt: name });
  }
  if (text !== undefined && isJson(name, mimeType)) {
    try {
      return h("pre", { class: "json-view artifact-text", dataset: { format: "json" } }, pretty(JSON.parse(text)));
    } catch {
      /* not JSON after all: shown as text */
    }
  }
  if (text !== undefined) return h("pre", { class: "artifact-text", dataset: { format: "text" } }, text);
  return h("p", { class: "artifact-binary muted" }, `${name} · ${mimeType} · ${size(bytes.length)} (no preview for this type; download it)`);
}

function readFile(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ""));
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

export function artifactsTab({ root, context, toast, fail, changed }) {
  let listed = [];
  let selected = null; // {filename, version}
  let sessionId = null;

  async function show(filename, version) {
    selected = { filename, version };
    renderList();
    const box = root.querySelector(".artifact-preview");
    const { app, user } = context();
    box.replaceChildren(h("p", { class: "muted small" }, "Loading…"));
    let part;
    try {
      part = await api.artifactVersion(app, user, sessionId, filename, version);
    } catch (error) {
      box.replaceChildren();
      return fail(error);
    }
    const content = contentOf(part);
    const plain = filename.startsWith("user:") ? filename.slice(5) : filename;
    const url = URL.createObjectURL(new Blob([content.bytes], { type: content.mimeType }));
    box.replaceChildren(
      h("div", { class: "artifact-preview-head" },
        h("strong", {}, filename), h("span", { class: "muted" }, ` v${version} · ${content.mimeType} · ${size(content.bytes.length)}`),
        h("span", { class: "spacer" }),
        h("a", { class: "button ghost small download", href: url, download: plain, "aria-label": `download ${filename} version ${version}` }, "Download")),
      preview(filename, content));
  }

  function renderList() {
    const list = root.querySelector(".artifact-list");
    if (!listed.length) {
      list.replaceChildren(h("li", { class: "empty small" }, "No artifacts yet. Tools save them, or upload a file below."));
      return;
    }
    list.replaceChildren(...listed.map((artifact) => h("li", { class: "artifact", dataset: { filename: artifact.filename } },
      h("div", { class: "artifact-head" },
        h("span", { class: "artifact-name" }, artifact.filename),
        h("span", { class: `badge scope-${artifact.scope}`, title: artifact.scope === "user" ? "the user's: seen from all of their sessions" : "this session's" }, artifact.scope)),
      h("div", { class: "artifact-versions" }, artifact.versions.map((v) => h("button", {
        class: `ghost small version${selected?.filename === artifact.filename && selected?.version === v.version ? " active" : ""}`,
        title: `${v.mimeType || "text"} · saved ${dateTime(v.createTime)}`,
        dataset: { version: String(v.version) },
        onclick: () => show(artifact.filename, v.version),
      }, `v${v.version}`))))));
  }

  function uploadForm() {
    const file = h("input", { type: "file", class: "upload-file", "aria-label": "file to upload" });
    const name = h("input", { class: "upload-name", placeholder: "save as (default: the file's name)", "aria-label": "artifact name", spellcheck: "false" });
    const userScope = h("input", { type: "checkbox", class: "upload-user-scope" });
    const error = h("div", { class: "form-error", role: "alert" });
    const form = h("form", { class: "artifact-upload" },
      h("h4", {}, "Upload a new version"),
      file, name,
      h("label", { class: "form-field inline" }, userScope, h("span", {}, "the user's (user:, seen from all their sessions)")),
      error,
      h("button", { type: "submit", class: "primary small" }, "Upload"));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      error.textContent = "";
      const chosen = file.files?.[0];
      if (!chosen) return void (error.textContent = "Choose a file first.");
      let filename = name.value.trim() || chosen.name;
      if (userScope.checked && !filename.startsWith("user:")) filename = `user:${filename}`;
      const { app, user } = context();
      const button = form.querySelector("button[type=submit]");
      button.disabled = true;
      try {
        const data = await readFile(chosen);
        const artifact = { inlineData: { mimeType: chosen.type || "application/octet-stream", data } };
        const saved = await api.uploadArtifact(app, user, sessionId, filename, artifact);
        toast(`Uploaded ${saved.filename} as version ${saved.version}.`);
        form.reset();
        selected = { filename: saved.filename, version: saved.version };
        await refresh();
        await changed();
      } catch (failure) {
        error.textContent = failure?.status === 413
          ? `${chosen.name} (${size(chosen.size)}) is too large for this server: an upload is sent as base64, a third larger, and the server takes bodies up to CAIRN_MAX_BODY_BYTES. Start it with a larger limit, or upload a smaller file.`
          : saveError(failure);
      } finally {
        button.disabled = false;
      }
    });
    return form;
  }

  async function refresh() {
    const { app, user, sessionId: current } = context();
    if (current !== sessionId) {
      sessionId = current;
      selected = null;
      root.replaceChildren();
    }
    if (!sessionId) return root.replaceChildren(h("div", { class: "empty small" }, "No session selected."));
    if (!root.querySelector(".artifact-list")) {
      root.replaceChildren(h("ul", { class: "artifact-list", "aria-label": "artifacts" }), h("div", { class: "artifact-preview" }), uploadForm());
    }
    try {
      listed = await api.artifacts(app, user, sessionId);
    } catch (error) {
      return fail(error);
    }
    if (current !== context().sessionId) return;
    renderList();
    if (selected) await show(selected.filename, selected.version);
  }

  return { refresh };
}
