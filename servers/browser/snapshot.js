// snapshot.js runs inside a page, in an isolated world, and turns the page
// into compact text for a model: an accessibility-like tree with one line per
// meaningful node and a ref on every element the model can act on. The Go
// side evaluates it (maybe many times) and calls globalThis.__domo.
//
// The walk reads the DOM, not the browser's accessibility tree: that is one
// round trip instead of thousands of protocol nodes, and it lets refs live in
// a WeakMap here so that an element keeps its ref for as long as it exists.
(() => {
  'use strict';
  if (globalThis.__domo) return; // a second evaluation keeps the refs

  const TEXT_MAX = 200;
  const NAME_MAX = 100;
  const OPTIONS_MAX = 20;
  const FIND_MAX = 20;
  const TRUNCATED = ' more nodes not shown (use browser_find, a subtree ref, or viewport)';

  // Elements that never render content of their own.
  const SKIP = new Set(['SCRIPT', 'STYLE', 'TEMPLATE', 'NOSCRIPT', 'HEAD', 'META', 'LINK', 'TITLE',
    'BASE', 'PARAM', 'SOURCE', 'TRACK', 'DATALIST', 'OBJECT', 'EMBED', 'CANVAS', 'VIDEO', 'AUDIO', 'MAP']);
  // Text-level elements: text on both sides of them is one run.
  const INLINE = new Set(['A', 'ABBR', 'B', 'BDI', 'BDO', 'CITE', 'CODE', 'DATA', 'DEL', 'DFN', 'EM',
    'FONT', 'I', 'INS', 'KBD', 'LABEL', 'MARK', 'Q', 'S', 'SAMP', 'SMALL', 'SPAN', 'STRONG', 'SUB',
    'SUP', 'TIME', 'TT', 'U', 'VAR', 'WBR', 'IMG', 'svg', 'SLOT', 'BUTTON', 'INPUT', 'SELECT',
    'TEXTAREA', 'OUTPUT', 'METER', 'PROGRESS', 'NOBR', 'BIG', 'STRIKE']);
  const ROLES = new Set(('alert alertdialog application article banner blockquote button caption cell ' +
    'checkbox code columnheader combobox complementary contentinfo definition deletion dialog directory ' +
    'document emphasis feed figure form generic grid gridcell group heading img insertion link list ' +
    'listbox listitem log main mark marquee math menu menubar menuitem menuitemcheckbox menuitemradio ' +
    'meter navigation none note option paragraph presentation progressbar radio radiogroup region row ' +
    'rowgroup rowheader scrollbar search searchbox separator slider spinbutton status strong subscript ' +
    'superscript switch tab table tablist tabpanel term textbox time timer toolbar tooltip tree ' +
    'treegrid treeitem').split(' '));
  // Roles that carry no line of their own: their content joins the parent.
  const FLAT = new Set(['generic', 'none', 'presentation', 'rowgroup', 'code', 'emphasis', 'strong',
    'subscript', 'superscript', 'deletion', 'insertion', 'mark', 'time']);
  const ACT = new Set(['link', 'button', 'textbox', 'searchbox', 'checkbox', 'radio', 'switch',
    'combobox', 'listbox', 'option', 'slider', 'spinbutton', 'tab', 'menuitem', 'menuitemcheckbox',
    'menuitemradio', 'treeitem']);
  // Roles named from their content; their text is the name, not child lines.
  const NFC = new Set(['link', 'button', 'heading', 'option', 'tab', 'menuitem', 'menuitemcheckbox',
    'menuitemradio', 'cell', 'gridcell', 'columnheader', 'rowheader', 'treeitem', 'tooltip',
    'checkbox', 'radio', 'switch']);
  const VALUE = new Set(['textbox', 'searchbox', 'combobox', 'slider', 'spinbutton', 'progressbar', 'meter']);
  const CHECKABLE = new Set(['checkbox', 'radio', 'switch', 'menuitemcheckbox', 'menuitemradio']);
  const FORM = new Set(['BUTTON', 'INPUT', 'SELECT', 'TEXTAREA', 'OPTION', 'OPTGROUP', 'FIELDSET']);
  const LANDMARK = new Set(['banner', 'complementary', 'contentinfo', 'form', 'main', 'navigation',
    'region', 'search', 'dialog', 'alertdialog']);
  const SECTIONING = 'article,aside,main,nav,section,[role=article],[role=complementary],[role=main],[role=navigation],[role=region]';
  const TEXT_INPUT = new Set(['', 'text', 'email', 'tel', 'url', 'search', 'password', 'number',
    'date', 'datetime-local', 'month', 'week', 'time', 'color']);

  // Walk flags.
  const F_INACT = 1; // inside an element that already has a ref
  const F_DROPTEXT = 2; // text of a label or legend that names a control
  const F_HIDDENTEXT = 4; // direct text of a visibility:hidden element
  const F_LAYOUT = 8; // inside a role=presentation table

  const VIS = { visibilityProperty: true };

  // Refs: an element keeps its ref while it lives; a ref whose element is
  // gone stays known, so el() can tell "stale" from "unknown".
  const refOf = new WeakMap();
  const byRef = new Map();
  let counter = 1;

  // A node with a line of its own.
  class Item {
    constructor(el, role) {
      this.el = el;
      this.role = role;
      this.kids = [];
      this.act = false;
      this.hasAct = false;
    }
  }

  // A run of text; owner is the element it was found in (for find).
  class Run {
    constructor(t, owner) {
      this.t = t;
      this.owner = owner;
    }
  }

  // The state of one walk.
  let cur = null;

  const norm = (s) => s.replace(/\s+/g, ' ').trim();
  const cut = (s, n) => (s.length > n ? s.slice(0, n).trimEnd() + '…' : s);
  const quote = (s) => '"' + cut(s, NAME_MAX).replace(/\\/g, '\\\\').replace(/"/g, '\\"') + '"';
  const indent = (d) => '  '.repeat(d);

  function style(el) {
    const v = el.ownerDocument.defaultView;
    return (v || window).getComputedStyle(el);
  }

  // vis tells how an element renders: 0 not at all (skip it and its
  // subtree), 1 normally, 2 without a box of its own (display:contents), 3
  // with a box but invisible (visibility:hidden), so its children may show.
  function vis(el) {
    if (el.checkVisibility(VIS)) return 1;
    const cs = style(el);
    if (cs.display === 'none') return 0;
    if (cs.display === 'contents') return 2;
    if (cs.visibility !== 'visible' && el.checkVisibility()) return 3;
    return 0;
  }

  function kidsOf(el) {
    if (el.shadowRoot) return el.shadowRoot.childNodes;
    if (el.tagName === 'SLOT') {
      const a = el.assignedNodes();
      if (a.length) return a;
    }
    return el.childNodes;
  }

  function explicitRole(attr) {
    for (let r of attr.trim().toLowerCase().split(/\s+/)) {
      if (r === 'image') r = 'img';
      if (ROLES.has(r)) return FLAT.has(r) ? '' : r;
    }
    return null;
  }

  function ownName(el) {
    return !!(el.getAttribute('aria-label') || el.getAttribute('aria-labelledby') || el.getAttribute('title'));
  }

  function inputRole(el) {
    switch (el.type) {
      case 'button': case 'submit': case 'reset': case 'image': case 'file': return 'button';
      case 'checkbox': return 'checkbox';
      case 'radio': return 'radio';
      case 'range': return 'slider';
      case 'number': return 'spinbutton';
      case 'hidden': return null;
      case 'search': return el.hasAttribute('list') ? 'combobox' : 'searchbox';
      default: return el.hasAttribute('list') ? 'combobox' : 'textbox';
    }
  }

  function implicitRole(el, tag, f) {
    switch (tag) {
      case 'A': case 'AREA': return el.hasAttribute('href') ? 'link' : '';
      case 'BUTTON': case 'SUMMARY': return 'button';
      case 'INPUT': return inputRole(el);
      case 'SELECT': return el.multiple || el.size > 1 ? 'listbox' : 'combobox';
      case 'TEXTAREA': return 'textbox';
      case 'OPTION': return 'option';
      case 'OPTGROUP': case 'FIELDSET': case 'DETAILS': return 'group';
      case 'H1': case 'H2': case 'H3': case 'H4': case 'H5': case 'H6': return 'heading';
      case 'IMG': return el.getAttribute('alt') === '' ? '' : 'img';
      case 'UL': case 'OL': case 'MENU': return 'list';
      case 'LI': return 'listitem';
      case 'NAV': return 'navigation';
      case 'MAIN': return 'main';
      case 'HEADER': return el.parentElement && el.parentElement.closest(SECTIONING) ? '' : 'banner';
      case 'FOOTER': return el.parentElement && el.parentElement.closest(SECTIONING) ? '' : 'contentinfo';
      case 'ASIDE': return 'complementary';
      case 'FORM': return ownName(el) ? 'form' : '';
      case 'SECTION': return ownName(el) ? 'region' : '';
      case 'ARTICLE': return 'article';
      case 'BLOCKQUOTE': return 'blockquote';
      case 'TABLE': return 'table';
      case 'TR': return f & F_LAYOUT ? '' : 'row';
      case 'TD': return f & F_LAYOUT ? '' : 'cell';
      case 'TH': return f & F_LAYOUT ? '' : el.getAttribute('scope') === 'row' ? 'rowheader' : 'columnheader';
      case 'DIALOG': return 'dialog';
      case 'P': return 'paragraph';
      case 'HR': return 'separator';
      case 'PROGRESS': return 'progressbar';
      case 'METER': return 'meter';
      case 'FIGURE': return 'figure';
      case 'IFRAME': case 'FRAME': return 'iframe';
      case 'DT': return 'term';
      case 'DD': return 'definition';
      case 'SEARCH': return 'search';
      case 'OUTPUT': return 'status';
      case 'MATH': case 'math': return 'math';
      case 'svg': return 'img';
      default: return '';
    }
  }

  // ---- the walk: DOM → Items and Runs ----

  function addText(n, s, owner) {
    const k = n.kids;
    const last = k[k.length - 1];
    if (last instanceof Run) last.t += s;
    else if (/\S/.test(s)) k.push(new Run(s, owner));
  }

  function walkKids(el, n, f) {
    const sr = el.shadowRoot;
    const first = sr ? sr.firstChild : el.firstChild;
    const skipText = f & (F_DROPTEXT | F_HIDDENTEXT);
    for (let c = first; c; c = c.nextSibling) {
      const t = c.nodeType;
      if (t === 1) visit(c, n, f);
      else if (t === 3 && !skipText) addText(n, c.data, el);
    }
  }

  function walkSlot(slot, n, f) {
    const a = slot.assignedNodes();
    if (!a.length) return walkKids(slot, n, f);
    const skipText = f & (F_DROPTEXT | F_HIDDENTEXT);
    for (const c of a) {
      if (c.nodeType === 1) visit(c, n, f);
      else if (c.nodeType === 3 && !skipText) addText(n, c.data, slot);
    }
  }

  function finish(n) {
    const k = n.kids;
    let j = 0;
    for (let i = 0; i < k.length; i++) {
      const x = k[i];
      if (x === null) continue;
      if (x instanceof Run) {
        x.t = norm(x.t);
        if (!x.t) continue;
      }
      k[j++] = x;
    }
    k.length = j;
  }

  function hasLabel(el) {
    const l = el.getAttribute('aria-label');
    return !!((l && l.trim()) || el.getAttribute('aria-labelledby'));
  }

  function svgNamed(el) {
    if (el.getAttribute('aria-label') || el.getAttribute('aria-labelledby')) return true;
    const t = el.querySelector(':scope > title');
    return !!(t && t.textContent.trim());
  }

  const textish = (c) => c !== null && c.nodeType === 3 && /\S/.test(c.data);

  function isPointer(el) {
    let p = cur.ptr.get(el);
    if (p === undefined) {
      p = style(el).cursor === 'pointer';
      cur.ptr.set(el, p);
    }
    return p;
  }

  function parentOf(el) {
    const p = el.parentNode;
    return p && p.nodeType === 11 ? p.host : p;
  }

  // clickTarget finds the click target a pointer cursor on el means: the
  // outermost element with that cursor, since the cursor is inherited. It
  // returns null when there is none, or when it is a label of a control.
  function clickTarget(el) {
    if (!isPointer(el)) return null;
    let t = el;
    for (let p = parentOf(el); p && p.nodeType === 1 && p !== cur.stop; p = parentOf(p)) {
      if (p.tagName === 'BODY' || p.tagName === 'HTML' || !isPointer(p)) break;
      t = p;
    }
    if (t.tagName === 'LABEL' && t.control && t.control.checkVisibility()) return null;
    return t;
  }

  // visit adds el to n: as an Item, or flattened into n's kids. force makes
  // a line for el whatever it is (the root of a subtree snapshot or a line()).
  function visit(el, n, f, force) {
    const tag = el.tagName;
    if (!force && SKIP.has(tag)) return;
    if (tag === 'BR' && !force) {
      if (!(f & (F_DROPTEXT | F_HIDDENTEXT))) addText(n, ' ', el);
      return;
    }
    const attrs = el.hasAttributes();
    let role = null;
    if (attrs) {
      if (!force && (el.getAttribute('aria-hidden') === 'true' || el.hasAttribute('inert'))) return;
      const r = el.getAttribute('role');
      if (r) role = explicitRole(r);
    }
    if (tag === 'SLOT' && !force) {
      walkSlot(el, n, f);
      return;
    }
    const v = force ? 1 : vis(el);
    if (v === 0) return;
    if (v === 1 && cur.vp && !force) {
      const r = el.getBoundingClientRect();
      const vp = cur.vp;
      if ((r.width || r.height) && (r.bottom <= vp.t || r.top >= vp.b || r.right <= vp.l || r.left >= vp.r)) return;
    }
    let kf = f & (F_INACT | F_LAYOUT);
    if (tag === 'TABLE') kf = role === '' ? kf | F_LAYOUT : kf & ~F_LAYOUT;
    if (role === null) {
      role = implicitRole(el, tag, f);
      if (role === null) { // input type=hidden
        if (!force) return;
        role = '';
      }
    }
    if (v === 3) role = '';

    let act = v !== 3 && ACT.has(role);
    if (!act && attrs && v !== 3) {
      if (el.hasAttribute('onclick')) act = true;
      else {
        const ti = el.getAttribute('tabindex');
        if (ti !== null && ti !== '' && +ti >= 0) act = true;
        else if (el.hasAttribute('contenteditable') && el.isContentEditable &&
          !(el.parentElement && el.parentElement.isContentEditable)) {
          act = true;
          if (!role) role = 'textbox';
        }
      }
    }
    let drop = false;
    if (tag === 'LABEL') {
      const c = el.control;
      drop = !!(c && c !== el && c.checkVisibility());
    } else if (tag === 'LEGEND' || tag === 'FIGCAPTION' || tag === 'CAPTION') {
      const p = el.parentElement;
      drop = !!(p && !p.getAttribute('aria-label') && !p.getAttribute('aria-labelledby'));
      if (tag === 'CAPTION') role = '';
    }
    // Pointer cursors: asking every element for its style costs too much on
    // big pages, so only leaves (text, images, empty elements) are asked, and
    // a pointer leaf names its outermost pointer ancestor, which is marked
    // when its walk ends (below).
    if (!act && v === 1 && !(f & F_INACT) && !force &&
      (!el.firstElementChild || tag === 'IMG' || tag === 'svg' || textish(el.firstChild) || textish(el.lastChild))) {
      const t = clickTarget(el);
      if (t === el) act = true;
      else if (t) cur.targets.add(t);
    }
    if (act) kf |= F_INACT;

    if (role === 'img' && !act && !force) {
      if (tag === 'svg' ? !svgNamed(el) : !(el.getAttribute('alt') || el.getAttribute('aria-label') ||
        el.getAttribute('aria-labelledby') || el.getAttribute('title'))) return;
    }
    // A generic with a name of its own (aria-label) keeps a line for it.
    if (!role && !act && !force && !(attrs && hasLabel(el))) {
      if (tag === 'svg') return;
      const block = !INLINE.has(tag);
      const k = n.kids;
      let last = k[k.length - 1];
      if (block && last instanceof Run) k.push(null), (last = null);
      const start = k.length;
      const runLen = last instanceof Run ? last.t.length : 0;
      if (drop) kf |= F_DROPTEXT;
      else kf |= f & F_DROPTEXT;
      if (v === 3) kf |= F_HIDDENTEXT;
      walkKids(el, n, kf);
      if (cur.targets.size && cur.targets.delete(el)) {
        // el turned out to be a click target: its content becomes its own.
        const it = new Item(el, 'generic');
        it.act = it.hasAct = true;
        it.kids = k.splice(start);
        if (last instanceof Run && last.t.length > runLen) {
          it.kids.unshift(new Run(last.t.slice(runLen), el));
          last.t = last.t.slice(0, runLen);
        }
        finish(it);
        k.push(it);
        n.hasAct = true;
        return;
      }
      if (block && k[k.length - 1] instanceof Run) k.push(null);
      return;
    }

    const it = new Item(el, role || 'generic');
    it.act = it.hasAct = act;
    if (tag === 'OPTION') {
      // A native option is chosen through its select, as in the snapshot.
      it.native = true;
      it.act = it.hasAct = false;
    }
    n.kids.push(it);
    switch (tag) {
      case 'SELECT': addOptions(el, it); break;
      case 'IFRAME': case 'FRAME': addFrame(el, it); break;
      case 'INPUT': case 'TEXTAREA': case 'IMG': case 'svg': case 'HR': case 'PROGRESS': case 'METER':
        break;
      case 'SLOT':
        walkSlot(el, it, kf);
        break;
      default:
        if (drop) kf |= F_DROPTEXT;
        walkKids(el, it, kf);
    }
    if (cur.targets.size && cur.targets.delete(el)) it.act = it.hasAct = true;
    finish(it);
    if (it.hasAct) n.hasAct = true;
  }

  function addOptions(sel, it) {
    const opts = sel.options;
    let len = 0;
    for (let i = 0; i < opts.length; i++) if (!opts[i].hidden) len++;
    if (len > OPTIONS_MAX && !cur.find) {
      const m = new Item(null, 'option');
      m.more = len;
      it.kids.push(m);
      return;
    }
    for (let i = 0; i < opts.length; i++) {
      const o = opts[i];
      if (o.hidden) continue;
      const x = new Item(o, 'option');
      x.native = true;
      it.kids.push(x);
    }
  }

  function frameDoc(el) {
    try {
      const d = el.contentDocument;
      return d && (d.body || d.documentElement) ? d : null;
    } catch (e) {
      return null;
    }
  }

  function addFrame(el, it) {
    const doc = frameDoc(el);
    if (!doc) {
      it.cross = el.src || el.getAttribute('src') || 'about:blank';
      return;
    }
    const saved = cur.vp;
    if (saved) {
      const r = el.getBoundingClientRect();
      const w = doc.defaultView;
      const ox = r.left + el.clientLeft;
      const oy = r.top + el.clientTop;
      cur.vp = {
        l: Math.max(0, saved.l - ox), t: Math.max(0, saved.t - oy),
        r: Math.min(w ? w.innerWidth : r.width, saved.r - ox), b: Math.min(w ? w.innerHeight : r.height, saved.b - oy),
      };
      if (cur.vp.l >= cur.vp.r || cur.vp.t >= cur.vp.b) {
        cur.vp = saved;
        return;
      }
    }
    const body = doc.body || doc.documentElement;
    const stop = cur.stop;
    cur.stop = body;
    walkKids(body, it, 0);
    cur.stop = stop;
    cur.vp = saved;
  }

  function viewportOf(win) {
    return { l: 0, t: 0, r: win.innerWidth, b: win.innerHeight };
  }

  // build walks a document, or the subtree of root, into a top Item.
  function build(root, viewport, find) {
    const doc = root ? root.ownerDocument : document;
    const body = document.body || document.documentElement;
    cur = {
      vp: viewport ? viewportOf(doc.defaultView || window) : null, find,
      stop: root || body, ptr: new Map(), targets: new Set(),
    };
    const top = new Item(null, '');
    try {
      if (root) visit(root, top, 0, true);
      else walkKids(body, top, 0);
      finish(top);
    } finally {
      cur = null;
    }
    return top;
  }

  // ---- names, states and values, computed only for lines that show ----

  // textOf is the name-from-content text of el: the visible text with img
  // alt and the values of embedded controls, whitespace collapsed.
  function textOf(root, skip) {
    let out = '';
    const walk = (node) => {
      const ks = kidsOf(node);
      for (let i = 0; i < ks.length && out.length < 1000; i++) {
        const c = ks[i];
        if (c.nodeType === 3) {
          out += c.data;
          continue;
        }
        if (c.nodeType !== 1 || c === skip) continue;
        const tag = c.tagName;
        if (SKIP.has(tag) || c.getAttribute('aria-hidden') === 'true') continue;
        if (tag !== 'SLOT') {
          const v = vis(c);
          if (v === 0 || v === 3) continue;
        }
        const al = c.getAttribute('aria-label');
        if (al && al.trim()) {
          out += ' ' + al + ' ';
          continue;
        }
        switch (tag) {
          case 'IMG': out += ' ' + (c.getAttribute('alt') || '') + ' '; continue;
          case 'svg': { const t = c.querySelector(':scope > title'); if (t) out += ' ' + t.textContent + ' '; continue; }
          case 'INPUT': if (c.type !== 'password' && (TEXT_INPUT.has(c.type) || inputRole(c) === 'button')) out += ' ' + c.value + ' '; continue;
          case 'TEXTAREA': out += ' ' + c.value + ' '; continue;
          case 'SELECT': { const o = c.selectedOptions[0]; if (o) out += ' ' + o.label + ' '; continue; }
          case 'BR': out += ' '; continue;
          case 'IFRAME': case 'FRAME': continue;
        }
        const block = !INLINE.has(tag);
        if (block) out += ' ';
        walk(c);
        if (block) out += ' ';
      }
    };
    walk(root);
    return norm(out);
  }

  function plainText(el) {
    return el.checkVisibility() ? textOf(el, null) : norm(el.textContent || '');
  }

  function labelledBy(el) {
    const ids = el.getAttribute('aria-labelledby');
    if (!ids) return '';
    const root = el.getRootNode();
    const parts = [];
    for (const id of ids.trim().split(/\s+/)) {
      const t = root.getElementById ? root.getElementById(id) : null;
      if (t) parts.push(t === el ? el.getAttribute('aria-label') || '' : plainText(t));
    }
    return norm(parts.join(' '));
  }

  function childText(el, sel) {
    const c = el.querySelector(sel);
    return c ? textOf(c, null) : '';
  }

  function nameOf(it) {
    const el = it.el;
    if (!el) return '';
    let v = labelledBy(el);
    if (v) return v;
    v = el.getAttribute('aria-label');
    if (v && v.trim()) return norm(v);
    const tag = el.tagName;
    switch (tag) {
      case 'INPUT': {
        const t = el.type;
        if (t === 'submit' || t === 'reset' || t === 'button') return el.value || (t === 'submit' ? 'Submit' : t === 'reset' ? 'Reset' : '');
        if (t === 'image') return el.alt || el.value || 'Submit';
      }
      // fall through: labels, then placeholder and title
      case 'TEXTAREA': case 'SELECT': case 'METER': case 'PROGRESS': case 'OUTPUT': {
        const ls = el.labels;
        if (ls && ls.length) {
          v = norm(Array.from(ls, (l) => textOf(l, el)).join(' '));
          if (v) return v;
        }
        v = el.getAttribute('placeholder') || el.getAttribute('title') || '';
        if (v || tag !== 'INPUT') return norm(v);
        break;
      }
      case 'OPTION': return norm(el.label);
      case 'IMG': return norm(el.getAttribute('alt') || el.getAttribute('title') || '');
      case 'svg': { const t = el.querySelector(':scope > title'); return t ? norm(t.textContent) : ''; }
      case 'FIELDSET': v = childText(el, ':scope > legend'); break;
      case 'FIGURE': v = childText(el, ':scope > figcaption'); break;
      case 'TABLE': v = childText(el, ':scope > caption'); break;
      case 'IFRAME': case 'FRAME': v = el.getAttribute('title') || el.getAttribute('name') || ''; break;
    }
    if (v) return norm(v);
    if (NFC.has(it.role)) {
      v = textOf(el, null);
      if (v) return v;
    }
    return norm(el.getAttribute('title') || '');
  }

  function deepActive(doc) {
    let a = doc.activeElement;
    for (;;) {
      if (!a) return null;
      if (a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
      else if (a.tagName === 'IFRAME' || a.tagName === 'FRAME') {
        const d = frameDoc(a);
        if (!d || !d.activeElement || d.activeElement === d.body) return a;
        a = d.activeElement;
      } else return a;
    }
  }

  function states(it, active) {
    const el = it.el;
    const tag = el.tagName;
    const role = it.role;
    let s = '';
    if (role === 'heading') {
      const m = /^H([1-6])$/.exec(tag);
      s += ' [level=' + (m ? m[1] : el.getAttribute('aria-level') || 2) + ']';
    }
    if (CHECKABLE.has(role)) {
      if (tag === 'INPUT' && (el.type === 'checkbox' || el.type === 'radio')) {
        if (el.indeterminate) s += ' [checked=mixed]';
        else if (el.checked) s += ' [checked]';
      } else {
        const c = el.getAttribute('aria-checked');
        if (c === 'true') s += ' [checked]';
        else if (c === 'mixed') s += ' [checked=mixed]';
      }
    }
    if ((FORM.has(tag) && el.matches(':disabled')) || el.getAttribute('aria-disabled') === 'true') s += ' [disabled]';
    const ex = el.getAttribute('aria-expanded');
    if (ex === 'true') s += ' [expanded]';
    else if (ex === 'false') s += ' [expanded=false]';
    else if (tag === 'SUMMARY' && el.parentElement && el.parentElement.tagName === 'DETAILS') {
      s += el.parentElement.open ? ' [expanded]' : ' [expanded=false]';
    }
    if (el === active) s += ' [focused]';
    if (it.native ? el.selected : el.getAttribute('aria-selected') === 'true') s += ' [selected]';
    const p = el.getAttribute('aria-pressed');
    if (p === 'true') s += ' [pressed]';
    else if (p === 'mixed') s += ' [pressed=mixed]';
    if (((tag === 'INPUT' || tag === 'SELECT' || tag === 'TEXTAREA') && el.required) ||
      el.getAttribute('aria-required') === 'true') s += ' [required]';
    if (((tag === 'INPUT' && TEXT_INPUT.has(el.type)) || tag === 'TEXTAREA') ? el.readOnly : el.getAttribute('aria-readonly') === 'true') s += ' [readonly]';
    return s;
  }

  // valueOf is the current value of a control, or null when it has none of
  // its own (then its text, if any, is shown).
  function valueOf(it) {
    const el = it.el;
    switch (el.tagName) {
      case 'INPUT':
        if (el.type === 'password') return el.value ? '••••' : '';
        return el.value;
      case 'TEXTAREA': return el.value;
      case 'SELECT': {
        if (it.role !== 'combobox') return null;
        const o = el.selectedOptions[0];
        return o ? o.label : '';
      }
      case 'PROGRESS': return el.position < 0 ? '' : Math.round(el.position * 100) + '%';
      case 'METER': return String(el.value);
    }
    return el.getAttribute('aria-valuetext') || el.getAttribute('aria-valuenow');
  }

  function hrefOf(el) {
    const h = el.href;
    if (typeof h === 'string') return h;
    const a = el.getAttribute('href') || el.getAttribute('xlink:href');
    if (!a) return '';
    try {
      return new URL(a, el.baseURI).href;
    } catch (e) {
      return a;
    }
  }

  // ---- output ----

  const NONE = [];

  // shape is what an Item shows: its child lines and the text after ":".
  function shape(it) {
    if (it.more !== undefined) return { kids: NONE, tail: '' };
    let kids = it.kids;
    let tail = '';
    if (NFC.has(it.role)) {
      if (kids.length) kids = kids.filter((k) => k instanceof Item && k.hasAct);
    } else if (kids.length && kids.every((k) => k instanceof Run)) {
      tail = kids.length === 1 ? kids[0].t : kids.map((k) => k.t).join(' ');
      kids = NONE;
    }
    return { kids, tail };
  }

  function refFor(el, st) {
    let r = refOf.get(el);
    if (r) return r;
    r = 'e' + st.next++;
    refOf.set(el, r);
    byRef.set(r, new WeakRef(el));
    return r;
  }

  function render(it, sh, st, withRef, alone) {
    if (it.more !== undefined) return '- option … (' + it.more + ' options)';
    let s = '- ' + it.role;
    const name = nameOf(it);
    if (name) s += ' ' + quote(name);
    if (it.cross !== undefined) return s + ' (other site, not readable: ' + it.cross + ')';
    s += states(it, st.active);
    if (withRef || it.act) s += ' [ref=' + refFor(it.el, st) + ']';
    let tail = sh.tail;
    if (VALUE.has(it.role)) {
      const v = valueOf(it);
      if (v !== null) tail = v;
    }
    if (st.urls && it.role === 'link') {
      const h = hrefOf(it.el);
      if (h) return s + ' -> ' + h;
    }
    if (tail) return s + ': ' + cut(norm(tail), TEXT_MAX);
    if (sh.kids.length && !alone) return s + ':';
    return s;
  }

  function count(kids) {
    let c = 0;
    for (let k of kids) {
      k = hoist(k);
      c += k instanceof Run ? 1 : 1 + count(shape(k).kids);
    }
    return c;
  }

  // Unnamed wrappers of a single element show that element in their place:
  // "- listitem:" over one link says nothing the list does not.
  const HOIST = new Set(['listitem', 'paragraph']);

  function hoist(k) {
    while (k instanceof Item && HOIST.has(k.role) && !k.act && k.more === undefined) {
      const sh = shape(k);
      if (sh.tail || sh.kids.length !== 1 || !(sh.kids[0] instanceof Item) || nameOf(k)) break;
      k = sh.kids[0];
    }
    return k;
  }

  function emit(kids, depth, st) {
    for (let k of kids) {
      k = hoist(k);
      st.total++;
      const show = st.used < st.max && depth < st.maxDepth;
      if (k instanceof Run) {
        if (show) {
          st.lines.push(indent(depth) + '- text: ' + cut(k.t, TEXT_MAX));
          st.used++;
          st.shown++;
        }
        continue;
      }
      const sh = shape(k);
      if (show) {
        st.lines.push(indent(depth) + render(k, sh, st, k.el === st.root, false));
        st.used++;
        st.shown++;
      }
      if (!sh.kids.length) continue;
      if (depth + 1 < st.maxDepth) {
        emit(sh.kids, depth + 1, st);
        continue;
      }
      const c = count(sh.kids);
      st.total += c;
      if (show && st.used < st.max) {
        st.lines.push(indent(depth + 1) + '- … (' + c + ' more nodes deeper)');
        st.used++;
      }
    }
  }

  function startNext(o) {
    const n = Math.floor(Number(o && o.next) || 0);
    return Math.max(n, counter);
  }

  function endNext(st) {
    counter = st.next;
    if (byRef.size > 100000) {
      for (const [r, w] of byRef) if (!w.deref()) byRef.delete(r);
    }
    return st.next;
  }

  // resolve is __domo.el: the element of a ref.
  function resolve(ref) {
    const w = byRef.get(String(ref));
    if (!w) throw new Error('unknown: ' + ref + ' is not a ref of this page; take a new snapshot to get refs');
    const el = w.deref();
    if (!el || !el.isConnected) throw new Error('stale: ' + ref + ' is no longer in the page; take a new snapshot');
    return el;
  }

  function snapshot(o) {
    o = o || {};
    const root = o.root ? resolve(o.root) : null;
    const top = build(root, !!o.viewport, false);
    const st = {
      lines: [], used: 0, shown: 0, total: 0,
      max: o.maxNodes > 0 ? o.maxNodes : Infinity,
      maxDepth: o.maxDepth > 0 ? o.maxDepth : Infinity,
      urls: !!o.urls, root, next: startNext(o), active: deepActive(document),
    };
    emit(top.kids, 0, st);
    const truncated = st.shown < st.total;
    if (truncated) st.lines.push('- … truncated: ' + (st.total - st.shown) + TRUNCATED);
    return { text: st.lines.join('\n'), next: endNext(st), shown: st.shown, total: st.total, truncated };
  }

  function find(o) {
    o = o || {};
    const text = String(o.text || '').toLowerCase();
    const role = String(o.role || '');
    const name = String(o.name || '').toLowerCase();
    if (!text && !role && !name) throw new Error('find needs text, role or name');
    const max = o.max > 0 ? o.max : FIND_MAX;
    const top = build(null, false, true);
    const st = { next: startNext(o), active: deepActive(document), urls: false };
    const lines = [];
    let matches = 0;
    // ctx is the innermost landmark with the last heading seen inside it.
    const stack = [{ where: '', heading: '' }];
    const hit = (line, c) => {
      if (matches++ < max) lines.push(line + (c.heading || c.where ? ' (' + (c.heading || c.where) + ')' : ''));
    };
    const walk = (kids) => {
      for (const k of kids) {
        const c = stack[stack.length - 1];
        if (k instanceof Run) {
          if ((!role || role === 'text') && !name && k.t.toLowerCase().includes(text)) {
            hit('- text [ref=' + refFor(k.owner, st) + ']: ' + cut(k.t, TEXT_MAX), c);
          }
          continue;
        }
        const sh = shape(k);
        if (k.more === undefined && (!role || k.role === role || (role === 'summary' && k.el.tagName === 'SUMMARY'))) {
          const nm = text || name ? nameOf(k).toLowerCase() : '';
          let ok = !name || nm.includes(name);
          if (ok && text) {
            const v = VALUE.has(k.role) ? valueOf(k) : null;
            ok = nm.includes(text) || (v !== null ? v : sh.tail).toLowerCase().includes(text);
          }
          if (ok) hit(render(k, sh, st, true, true), c);
        }
        if (k.role === 'heading') c.heading = 'under heading ' + quote(nameOf(k));
        if (!sh.kids.length) continue;
        const land = LANDMARK.has(k.role);
        if (land) {
          const nm = nameOf(k);
          stack.push({ where: 'in ' + k.role + (nm ? ' ' + quote(nm) : ''), heading: '' });
        }
        walk(sh.kids);
        if (land) stack.pop();
      }
    };
    walk(top.kids);
    if (matches > max) lines.push('- … ' + (matches - max) + ' more matches not shown; narrow the query');
    return { text: lines.join('\n'), matches, next: endNext(st) };
  }

  function line(ref) {
    const el = resolve(ref);
    const top = build(el, false, false);
    const it = top.kids[0];
    const st = { next: counter, active: deepActive(document), urls: false };
    const s = render(it, shape(it), st, true, true);
    endNext(st);
    return s;
  }

  // ---- readable text ----

  const LINE_BREAK = new Set(['LI', 'TR', 'DT', 'DD', 'OPTION', 'CAPTION', 'FIGCAPTION', 'SUMMARY', 'LEGEND']);

  // readText is innerText-like: blank lines between blocks, one line per
  // list item or table row, cells joined by " | ", same-origin frames in.
  function readText(ref) {
    const root = ref ? resolve(ref) : document.body || document.documentElement;
    const out = [];
    let line = '';
    let brk = 0; // pending break before the next text: 0 none, 1 line, 2 blank line
    let cell = false;
    const put = (s) => {
      if (!line) {
        s = s.trimStart();
        if (!s) return;
        if (brk && out.length) {
          if (brk === 2 && out[out.length - 1] !== '') out.push('');
        }
        brk = 0;
      } else if (brk) {
        out.push(line.trimEnd());
        if (brk === 2) out.push('');
        line = '';
        brk = 0;
        s = s.trimStart();
        if (!s) return;
      }
      if (cell) {
        if (line && !line.endsWith(' | ')) line = line.trimEnd() + ' | ';
        cell = false;
      }
      line += line.endsWith(' ') && s.startsWith(' ') ? s.slice(1) : s;
    };
    const br = (n) => {
      if (n > brk) brk = n;
    };
    const walk = (node, pre, hidden) => {
      const ks = kidsOf(node);
      for (let i = 0; i < ks.length; i++) {
        const c = ks[i];
        if (c.nodeType === 3) {
          if (hidden) continue;
          if (pre) {
            const parts = c.data.split('\n');
            parts.forEach((p, j) => {
              if (j) {
                if (line) out.push(line.trimEnd());
                line = '';
                br(1);
              }
              if (p) put(p);
            });
          } else put(c.data.replace(/\s+/g, ' '));
          continue;
        }
        if (c.nodeType !== 1) continue;
        const tag = c.tagName;
        if (SKIP.has(tag) || tag === 'svg' || c.getAttribute('aria-hidden') === 'true') continue;
        if (tag === 'BR') {
          if (line) out.push(line.trimEnd());
          line = '';
          continue;
        }
        const v = tag === 'SLOT' ? 2 : vis(c);
        if (v === 0) continue;
        if (tag === 'IFRAME' || tag === 'FRAME') {
          br(2);
          const d = frameDoc(c);
          if (d) walk(d.body || d.documentElement, false, false);
          else put('[iframe, other site, not readable: ' + (c.src || '') + ']');
          br(2);
          continue;
        }
        if (tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT' || tag === 'IMG') continue;
        if (tag === 'TD' || tag === 'TH') cell = true;
        const b = INLINE.has(tag) || tag === 'TD' || tag === 'TH' ? 0 : LINE_BREAK.has(tag) ? 1 : 2;
        if (b) br(b);
        walk(c, pre || tag === 'PRE', v === 3);
        if (b) br(b);
      }
    };
    walk(root, false, false);
    if (line) out.push(line.trimEnd());
    return out.join('\n').replace(/\n{3,}/g, '\n\n').trim();
  }

  // hasText tells whether the page's visible text holds t, ignoring case.
  function hasText(t) {
    const b = document.body;
    return !!b && b.innerText.toLowerCase().includes(String(t).toLowerCase());
  }

  globalThis.__domo = { snapshot, find, el: resolve, line, readText, hasText };
})();
true;
