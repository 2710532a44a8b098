// Answer forms for pending interrupts: confirm/deny, free text, a form from the
// response JSON schema, or raw JSON when the schema is more than a form can show.

import { h, pretty } from "./dom.js";
import { callText } from "./model.js";

const KIND_TITLES = {
  input: "Input requested",
  confirmation: "Confirmation requested",
  credential: "Credential requested",
  in_doubt: "A call may or may not have run",
  long_running: "Waiting for a long-running tool",
  interrupted: "Invocation interrupted",
};

/** A field for one schema that `read()`s a value; null when the schema needs the JSON fallback. */
export function fieldFor(schema, name, required, topLevel = false) {
  if (!schema || typeof schema !== "object") return null;
  const id = `f-${Math.random().toString(36).slice(2, 9)}`;
  const title = schema.title || name;
  const hint = schema.description ? h("small", { class: "hint" }, schema.description) : null;
  const wrap = (control, read, inline = false) => ({
    element: h("label", { class: `form-field${inline ? " inline" : ""}`, for: id },
      inline ? [control, h("span", {}, title)] : [title ? h("span", {}, title, required ? h("em", {}, " *") : null) : null, control],
      hint),
    read,
    focus: () => control.focus(),
  });
  if (Array.isArray(schema.enum)) {
    const select = h("select", { id, name },
      required ? null : h("option", { value: "" }, "—"),
      schema.enum.map((v, i) => h("option", { value: String(i) }, typeof v === "string" ? v : JSON.stringify(v))));
    if (schema.default !== undefined) select.value = String(schema.enum.indexOf(schema.default));
    return wrap(select, () => (select.value === "" ? undefined : schema.enum[Number(select.value)]));
  }
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
  if (type === "string") {
    const long = !schema.format && !schema.enum && (schema.maxLength ? schema.maxLength > 200 : topLevel);
    const input = long
      ? h("textarea", { id, name, rows: 2 })
      : h("input", { id, name, type: schema.format === "email" ? "email" : "text" });
    if (schema.default !== undefined) input.value = schema.default;
    if (schema.minLength) input.required = true;
    return wrap(input, () => (input.value === "" && !required ? undefined : input.value));
  }
  if (type === "number" || type === "integer") {
    const input = h("input", { id, name, type: "number", step: type === "integer" ? "1" : "any" });
    if (schema.minimum !== undefined) input.min = schema.minimum;
    if (schema.maximum !== undefined) input.max = schema.maximum;
    if (schema.default !== undefined) input.value = schema.default;
    return wrap(input, () => {
      if (input.value === "") {
        if (required) throw new Error(`${title} is required`);
        return undefined;
      }
      const n = Number(input.value);
      if (type === "integer" && !Number.isInteger(n)) throw new Error(`${title} must be a whole number`);
      return n;
    });
  }
  if (type === "boolean") {
    const input = h("input", { id, name, type: "checkbox" });
    input.checked = schema.default === true;
    return wrap(input, () => input.checked, true);
  }
  if (type === "object" && schema.properties && !schemaNeedsJson(schema)) {
    const requiredNames = new Set(schema.required || []);
    const fields = Object.entries(schema.properties).map(([key, sub]) => [key, fieldFor(sub, key, requiredNames.has(key))]);
    if (fields.some(([, f]) => !f)) return null;
    const element = h("fieldset", { class: "form-object" }, name ? h("legend", {}, title) : null, fields.map(([, f]) => f.element));
    return {
      element,
      read: () => {
        const value = {};
        for (const [key, f] of fields) {
          const v = f.read();
          if (v !== undefined) value[key] = v;
          else if (requiredNames.has(key)) throw new Error(`${key} is required`);
        }
        return value;
      },
      focus: () => fields[0]?.[1].focus(),
    };
  }
  return null;
}

function schemaNeedsJson(schema) {
  return Object.values(schema.properties).some((sub) => {
    const t = Array.isArray(sub.type) ? sub.type.find((x) => x !== "null") : sub.type;
    return !Array.isArray(sub.enum) && !["string", "number", "integer", "boolean"].includes(t);
  });
}

function jsonField(label, initial) {
  const area = h("textarea", { class: "json", rows: 4, spellcheck: false, "aria-label": label });
  area.value = initial === undefined ? "" : pretty(initial);
  return {
    element: h("label", { class: "form-field" }, h("span", {}, label), area),
    read: () => {
      if (!area.value.trim()) return undefined;
      try {
        return JSON.parse(area.value);
      } catch (error) {
        throw new Error(`${label}: not valid JSON (${error.message})`);
      }
    },
    focus: () => area.focus(),
  };
}

/**
 * A card for one interrupt. `answer(response)` sends the answer (a promise);
 * `resume(invocationId)` continues an interrupted invocation.
 */
export function interruptCard(interrupt, { answer, resume }) {
  const error = h("div", { class: "form-error", role: "alert" });
  const busy = (promise, buttons) => {
    buttons.forEach((b) => (b.disabled = true));
    error.textContent = "";
    return promise.catch((e) => (error.textContent = e.message)).finally(() => buttons.forEach((b) => (b.disabled = false)));
  };
  const guard = (fn) => () => {
    try {
      return fn();
    } catch (e) {
      error.textContent = e.message;
      return null;
    }
  };
  const call = interrupt.functionCall && interrupt.kind !== "input" ? h("code", { class: "call" }, callText(interrupt.functionCall)) : null;
  const where = [interrupt.author, interrupt.nodePath].filter(Boolean).join(" · ");
  const header = h("div", { class: "card-head" },
    h("span", { class: `kind ${interrupt.kind}` }, KIND_TITLES[interrupt.kind] || interrupt.kind),
    h("span", { class: "where" }, where));
  const body = [];
  if (interrupt.message) body.push(h("p", { class: "ask" }, interrupt.message));
  if (call) body.push(call);
  const form = h("form", { class: "answer-form", novalidate: true });
  const actions = h("div", { class: "card-actions" });
  const card = h("article", { class: `interrupt-card ${interrupt.kind}`, dataset: { interruptId: interrupt.id, kind: interrupt.kind } }, header, body, form, error);

  if (interrupt.kind === "confirmation") {
    const payload = interrupt.payload !== undefined && interrupt.payload !== null ? jsonField("payload (sent back with your answer)", interrupt.payload) : null;
    const yes = h("button", { type: "submit", class: "primary approve" }, "Approve");
    const no = h("button", { type: "button", class: "danger reject" }, "Reject");
    const send = (confirmed) =>
      guard(() => {
        const response = { confirmed };
        const p = payload?.read();
        if (p !== undefined) response.payload = p;
        return busy(answer(response), [yes, no]);
      })();
    form.append(payload ? payload.element : "", actions);
    actions.append(yes, no);
    form.addEventListener("submit", (e) => (e.preventDefault(), send(true)));
    no.addEventListener("click", () => send(false));
    return card;
  }
  if (interrupt.kind === "interrupted") {
    const go = h("button", { type: "submit", class: "primary" }, "Continue the invocation");
    form.append(h("p", { class: "hint" }, "Its process stopped mid-call; continuing re-runs idempotent calls and asks about the others."), actions);
    actions.append(go);
    form.addEventListener("submit", (e) => (e.preventDefault(), busy(resume(interrupt.invocationId), [go])));
    return card;
  }
  if (interrupt.kind === "in_doubt") {
    const rerun = h("button", { type: "button", class: "primary" }, "Run it again");
    const result = jsonField("or record what it returned (JSON)", undefined);
    const record = h("button", { type: "submit" }, "Record result");
    form.append(result.element, actions);
    actions.append(rerun, record);
    rerun.addEventListener("click", () => busy(answer({ rerun: true }), [rerun, record]));
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      guard(() => {
        const value = result.read();
        if (value === undefined) throw new Error("Enter what the call returned (JSON, e.g. null), or run it again.");
        return busy(answer({ result: value }), [rerun, record]);
      })();
    });
    return card;
  }

  if (interrupt.payload !== undefined && interrupt.payload !== null && interrupt.kind !== "credential") {
    body.push(payloadView(interrupt.payload));
    card.insertBefore(body[body.length - 1], form);
  }
  const schema = interrupt.responseSchema;
  let field = null;
  let wrapResult = true;
  if (interrupt.kind === "credential") {
    field = credentialField(interrupt.payload || {}) || jsonField("auth config with the credential filled in", interrupt.payload);
    wrapResult = false;
  } else if (schema) {
    field = fieldFor(schema, "", true, true) || jsonField("answer (JSON)", schema.default);
  } else {
    const area = h("textarea", { rows: 2, "aria-label": "answer", placeholder: "Your answer" });
    field = { element: area, read: () => area.value, focus: () => area.focus() };
  }
  const submit = h("button", { type: "submit", class: "primary" }, "Send answer");
  form.append(field.element, actions);
  actions.append(submit);
  if (schema && Array.isArray(schema.enum) && schema.enum.length <= 4) {
    // Small choices are quicker as buttons.
    field.element.hidden = true;
    submit.hidden = true;
    for (const value of schema.enum) {
      const b = h("button", { type: "button", class: "choice" }, typeof value === "string" ? value : JSON.stringify(value));
      b.addEventListener("click", () => busy(answer({ result: value }), [...actions.querySelectorAll("button")]));
      actions.append(b);
    }
  }
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    guard(() => {
      const value = field.read();
      if (schema?.minLength && (value ?? "").length < schema.minLength) throw new Error("An answer is required.");
      const response = wrapResult ? { result: value } : value;
      return busy(answer(response), [submit]);
    })();
  });
  field.element.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) form.requestSubmit();
  });
  return card;
}

/**
 * A form for the credential a tool asks for, by its auth scheme: an API key, an HTTP bearer
 * token or user and password, or an OAuth2 sign-in (a link, then the URL it came back to).
 * `read()` gives the asked auth config with `exchangedAuthCredential` filled in. Null for
 * another scheme (the caller falls back to the JSON editor).
 */
function credentialField(config) {
  const scheme = config.authScheme || {};
  const secret = (label, type = "password") => h("input", { type, name: label, autocomplete: "off", spellcheck: false, "aria-label": label });
  const labelled = (label, control) => h("label", { class: "form-field" }, h("span", {}, label), control);
  const answer = (exchanged) => ({ ...config, exchangedAuthCredential: { ...(config.exchangedAuthCredential || {}), ...exchanged } });
  const need = (input, what) => {
    if (!input.value.trim()) throw new Error(`Enter the ${what}.`);
    return input.value.trim();
  };
  if (scheme.type === "apiKey") {
    const key = secret("API key");
    const where = [scheme.in, scheme.name].filter(Boolean).join(" ");
    return {
      element: labelled(`API key${where ? ` (sent in ${where})` : ""}`, key),
      read: () => answer({ authType: "apiKey", apiKey: need(key, "API key") }),
      focus: () => key.focus(),
    };
  }
  if (scheme.type === "http" && String(scheme.scheme).toLowerCase() === "bearer") {
    const token = secret("bearer token");
    return {
      element: labelled("Bearer token", token),
      read: () => answer({ authType: "http", http: { scheme: "bearer", credentials: { token: need(token, "bearer token") } } }),
      focus: () => token.focus(),
    };
  }
  if (scheme.type === "http" && String(scheme.scheme).toLowerCase() === "basic") {
    const user = secret("user name", "text");
    const password = secret("password");
    return {
      element: h("div", {}, labelled("User name", user), labelled("Password", password)),
      read: () => answer({ authType: "http", http: { scheme: "basic", credentials: { username: need(user, "user name"), password: need(password, "password") } } }),
      focus: () => user.focus(),
    };
  }
  const signIn = config.exchangedAuthCredential?.oauth2;
  if (signIn?.authUri) {
    const back = secret("the URL the sign-in sent you back to", "url");
    return {
      element: h("div", {},
        h("p", {}, h("a", { href: signIn.authUri, target: "_blank", rel: "noopener", class: "sign-in" }, "Sign in"), " in a new tab, then paste the address it sent you back to."),
        labelled("The URL the sign-in sent you back to", back)),
      read: () => answer({ oauth2: { ...signIn, authResponseUri: need(back, "URL the sign-in sent you back to") } }),
      focus: () => back.focus(),
    };
  }
  return null;
}

function payloadView(payload) {
  if (payload && typeof payload === "object" && !Array.isArray(payload)) {
    const entries = Object.entries(payload);
    if (entries.every(([, v]) => typeof v !== "object" || v === null)) {
      return h("dl", { class: "payload" }, entries.map(([k, v]) => [h("dt", {}, k), h("dd", {}, String(v))]));
    }
  }
  return h("pre", { class: "payload" }, typeof payload === "string" ? payload : pretty(payload));
}
