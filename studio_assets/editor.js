// The Studio's record editor: CodeMirror 6 over each `.editor` box (markdown body, YAML
// frontmatter), bundled by build.sh into insika_knowledge/studio/static/editor.js.
//
// Progressive enhancement: the page is a plain form whose <textarea name="markdown"> is
// what gets submitted. This script hides that textarea (and its line-number gutter),
// mounts CodeMirror in its place, and copies every change back into it, so the form
// posts exactly what the operator sees. Without JavaScript the textarea still works.
//
// Adds: line wrapping, line numbers (the line named by a save error marked `err`),
// markdown + frontmatter highlighting, Ctrl/Cmd+S to submit the form, undo history,
// search (Ctrl/Cmd+F), and a warning before leaving the page with unsaved changes.

import { EditorState, RangeSet } from "@codemirror/state";
import {
  EditorView, GutterMarker, drawSelection, gutterLineClass, highlightActiveLine,
  highlightActiveLineGutter, keymap, lineNumbers,
} from "@codemirror/view";
import { defaultKeymap, history, historyKeymap } from "@codemirror/commands";
import { LanguageSupport, defaultHighlightStyle, syntaxHighlighting } from "@codemirror/language";
import { markdownKeymap, markdownLanguage } from "@codemirror/lang-markdown";
import { yamlFrontmatter } from "@codemirror/lang-yaml";
import { highlightSelectionMatches, searchKeymap } from "@codemirror/search";

class ErrorLine extends GutterMarker {
  constructor() { super(); this.elementClass = "err"; }
}
const ERROR_LINE = new ErrorLine();

// The response's CSP style nonce: CodeMirror's style elements must carry it.
const NONCE = document.querySelector('meta[name="csp-nonce"]')?.getAttribute("content") || "";

// Editors with unsaved changes, and whether their form is being submitted.
const open = [];

function errorLineClass(number) {
  return gutterLineClass.compute(["doc"], (state) => (
    number > 0 && number <= state.doc.lines
      ? RangeSet.of([ERROR_LINE.range(state.doc.line(number).from)])
      : RangeSet.empty
  ));
}

function mount(box) {
  const area = box.querySelector("textarea");
  if (!area || box.classList.contains("cm-mounted")) return;
  const form = area.form;
  const readOnly = area.readOnly;
  const errorLine = parseInt(box.getAttribute("data-error-line") || "0", 10);
  // The record's final newline is kept out of the editor (no numbered empty last line)
  // and put back on every copy into the textarea.
  const ending = area.value.endsWith("\n") ? "\n" : "";
  const doc = ending ? area.value.slice(0, -1) : area.value;
  const entry = { initial: area.value, dirty: false, submitting: false };
  open.push(entry);

  const save = () => {
    if (!form || readOnly) return false;
    if (typeof form.requestSubmit === "function") form.requestSubmit();
    else form.submit();
    return true;
  };
  const view = new EditorView({
    parent: box,
    state: EditorState.create({
      doc,
      extensions: [
        EditorView.cspNonce.of(NONCE),
        lineNumbers(),
        highlightActiveLineGutter(),
        history(),
        drawSelection(),
        highlightActiveLine(),
        highlightSelectionMatches(),
        EditorView.lineWrapping,
        // GFM markdown without nested HTML/JS/CSS parsers (they would triple the bundle).
        yamlFrontmatter({ content: new LanguageSupport(markdownLanguage) }),
        syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
        keymap.of([
          { key: "Mod-s", preventDefault: true, run: save },
          ...markdownKeymap, ...defaultKeymap, ...historyKeymap, ...searchKeymap,
        ]),
        EditorState.readOnly.of(readOnly),
        EditorView.editable.of(!readOnly),
        EditorView.contentAttributes.of({
          "aria-label": area.getAttribute("aria-label") || "Concept markdown",
        }),
        errorLineClass(errorLine),
        EditorView.updateListener.of((update) => {
          if (!update.docChanged) return;
          area.value = update.state.doc.toString() + ending;
          entry.dirty = area.value !== entry.initial;
          box.classList.toggle("dirty", entry.dirty);
        }),
      ],
    }),
  });
  box.classList.add("cm-mounted");
  area.hidden = true;
  const gutter = box.querySelector(".gutter");
  if (gutter) gutter.hidden = true;
  box.editorView = view; // for scripts and tests: the live CodeMirror view of this box
  if (form) form.addEventListener("submit", () => { entry.submitting = true; });
  if (errorLine > 0 && errorLine <= view.state.doc.lines && !readOnly) {
    const line = view.state.doc.line(errorLine);
    view.dispatch({
      selection: { anchor: line.from, head: line.to },
      effects: EditorView.scrollIntoView(line.from, { y: "center" }),
    });
    view.focus();
  }
}

window.addEventListener("beforeunload", (event) => {
  if (open.some((e) => e.dirty && !e.submitting)) {
    event.preventDefault();
    event.returnValue = ""; // older browsers need it set to show the prompt
  }
});

document.querySelectorAll(".editor").forEach(mount);
