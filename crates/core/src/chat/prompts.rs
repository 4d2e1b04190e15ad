//! The generation prompts a template without `{% generation %}` needs for its mask, from one
//! render of the conversation rather than one render per assistant message.
//!
//! The mask of such a template is found from `prompt_i`, the conversation before assistant
//! message `i` rendered with `add_generation_prompt=True` ([`super::frame::assistant_spans`]).
//! Rendering each of them re-renders every earlier message: about half of a ChatML
//! conversation's rendering time. For a *message-local* template ([`message_local`]) each
//! `prompt_i` is known without rendering it:
//!
//! ```text
//! prompt_i = full[..at_i] + tail
//! ```
//!
//! where `full` is the conversation's rendering, `at_i` how much of it was written when the
//! loop over `messages` fetched message `i` ([`Fetches`]), and `tail` what the template writes
//! after the loop with `add_generation_prompt=True` (the rendering of no messages with the
//! prompt, minus what it wrote before the loop).
//!
//! Why that is exact: a message-local template reads `messages` only as the one top-level
//! loop's sequence (no `messages[0]`, no `messages|length`), `add_generation_prompt` only after
//! that loop, and the loop's `loop` only as `index`, `index0` and `first` (not `last`, `length`,
//! `revindex`, `nextitem`, which see the messages after the current one). So the rendering of
//! `messages[:i]` runs exactly the instructions of the full rendering up to the moment the loop
//! asks for message `i`: it writes `full[..at_i]`, and its loop ends there. What follows the
//! loop reads only `add_generation_prompt` and variables the template never assigns (the
//! caller's, the same in every rendering), so it writes `tail` whatever the messages were; the
//! empty rendering writes the same text before its loop as the full one, and that is checked.
//! Everything after this is the prefix renders' own code: the prompts are compared with the
//! rendering and placed by [`super::frame::assistant_spans`], so a template that writes its
//! prompt differently from its turns fails exactly as before. A template that is not
//! message-local (most published ones read `messages[0]` or `loop.last`), a render whose
//! fetches are not 0, 1, 2, ... in order, or two renders that together could exceed the fuel
//! one prefix render has, takes the prefix renders instead.
//!
//! Cost: one extra render of no messages per conversation, instead of one render per assistant
//! message; the analysis runs once, when the template is compiled.

use std::collections::HashSet;
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use minijinja::machinery::ast::{CallArg, Expr, Stmt};

/// The calls a message-local template may make: pure functions of their arguments
/// (`strftime_now` is not: two renders at different times differ).
const PURE_GLOBALS: [&str; 4] = ["raise_exception", "namespace", "range", "dict"];

/// What the message loop's `loop` may be asked: what depends on the messages before only.
const PREFIX_LOOP_ATTRS: [&str; 3] = ["index", "index0", "first"];

/// Whether `source` (as compiled: after the `{% generation %}` rewrite) is message-local (see
/// the module docs): its top level is statements that do not read `messages` or
/// `add_generation_prompt`, one `{% for x in messages %}` (no filter, no `recursive`, no
/// `else`) whose body reads neither and uses `loop` only for `index`/`index0`/`first` and has
/// no `break` of it, then statements that read only `add_generation_prompt` and names the
/// template never assigns. No macros, no `{% call %}`, no function but [`PURE_GLOBALS`] and
/// methods. A template it cannot parse is not message-local.
pub fn message_local(source: &str, syntax: minijinja::syntax::SyntaxConfig) -> bool {
    let Ok(Stmt::Template(root)) = minijinja::machinery::parse(source, "chat_template", syntax) else {
        return false;
    };
    let is_messages = |e: &Expr<'_>| matches!(e, Expr::Var(v) if v.id == "messages");
    let loops: Vec<usize> = root.children.iter().enumerate()
        .filter(|(_, s)| matches!(s, Stmt::ForLoop(f) if is_messages(&f.iter)))
        .map(|(k, _)| k)
        .collect();
    let [at] = loops[..] else { return false };
    let Stmt::ForLoop(the_loop) = &root.children[at] else { return false };
    if !matches!(the_loop.target, Expr::Var(_)) || the_loop.filter_expr.is_some() || the_loop.recursive || !the_loop.else_body.is_empty() {
        return false;
    }
    let (mut pre, mut body, mut post) = (Scan::default(), Scan::default(), Scan::default());
    pre.stmts(&root.children[..at], false);
    body.target(&the_loop.target);
    body.stmts(&the_loop.body, true);
    post.stmts(&root.children[at + 1..], false);
    let bound: HashSet<&str> = pre.bound.iter().chain(&body.bound).chain(&post.bound).copied().collect();
    let reads_the_messages_or_flag = |scan: &Scan<'_>| ["messages", "add_generation_prompt"].iter().any(|r| scan.reads.contains(r));
    let refused = pre.bad
        || body.bad
        || post.bad
        || ["messages", "add_generation_prompt", "loop"].iter().any(|r| bound.contains(r))
        || reads_the_messages_or_flag(&pre)
        || reads_the_messages_or_flag(&body)
        || post.reads.contains("messages")
        || post.reads.iter().any(|name| bound.contains(name));
    !refused
}

/// The names a part of a template reads and assigns, and whether it does anything a
/// message-local template may not.
#[derive(Default)]
struct Scan<'a> {
    reads: HashSet<&'a str>,
    bound: HashSet<&'a str>,
    bad: bool,
}

impl<'a> Scan<'a> {
    /// `message_loop`: whether `loop` here is the message loop's (not a nested loop's).
    fn stmts(&mut self, stmts: &[Stmt<'a>], message_loop: bool) {
        for s in stmts {
            self.stmt(s, message_loop);
        }
    }

    fn stmt(&mut self, s: &Stmt<'a>, message_loop: bool) {
        match s {
            Stmt::EmitExpr(e) => self.expr(&e.expr, message_loop),
            Stmt::EmitRaw(_) | Stmt::Continue(_) => {}
            Stmt::ForLoop(f) => {
                self.expr(&f.iter, message_loop);
                self.target(&f.target);
                if let Some(e) = &f.filter_expr {
                    self.expr(e, message_loop); // whichever `loop` it sees: the stricter reading
                }
                self.stmts(&f.body, false);
                self.stmts(&f.else_body, message_loop);
            }
            Stmt::IfCond(c) => {
                self.expr(&c.expr, message_loop);
                self.stmts(&c.true_body, message_loop);
                self.stmts(&c.false_body, message_loop);
            }
            Stmt::WithBlock(w) => {
                for (target, value) in &w.assignments {
                    self.expr(value, message_loop);
                    self.target(target);
                }
                self.stmts(&w.body, message_loop);
            }
            Stmt::Set(set) => {
                self.expr(&set.expr, message_loop);
                self.target(&set.target);
            }
            Stmt::SetBlock(set) => {
                self.target(&set.target);
                if let Some(f) = &set.filter {
                    self.expr(f, message_loop);
                }
                self.stmts(&set.body, message_loop);
            }
            Stmt::AutoEscape(a) => {
                self.expr(&a.enabled, message_loop);
                self.stmts(&a.body, message_loop);
            }
            Stmt::FilterBlock(f) => {
                self.expr(&f.filter, message_loop);
                self.stmts(&f.body, message_loop);
            }
            Stmt::Break(_) => self.bad |= message_loop, // ends the message loop early
            Stmt::Do(d) => self.call(&d.call.expr, &d.call.args, message_loop),
            // Macros and {% call %} blocks (their bodies run where they are called), a nested
            // template: not analysed.
            _ => self.bad = true,
        }
    }

    /// An assignment's target: the names it binds (`ns.x` reads `ns`).
    fn target(&mut self, target: &Expr<'a>) {
        match target {
            Expr::Var(v) => {
                self.bound.insert(v.id);
            }
            Expr::Tuple(t) => t.items.iter().for_each(|item| self.target(item)),
            Expr::List(l) => l.items.iter().for_each(|item| self.target(item)),
            Expr::GetAttr(g) => self.expr(&g.expr, false),
            _ => self.bad = true,
        }
    }

    fn call(&mut self, callee: &Expr<'a>, args: &[CallArg<'a>], message_loop: bool) {
        match callee {
            Expr::Var(v) if PURE_GLOBALS.contains(&v.id) => {
                self.reads.insert(v.id);
            }
            // A method of a value (`.strip()`, `.items()`); not of the message loop's `loop`
            // (`loop.cycle`, `loop.changed`, or `loop(...)` of a recursive loop).
            Expr::GetAttr(g) if !(message_loop && matches!(&g.expr, Expr::Var(v) if v.id == "loop")) => {
                self.expr(&g.expr, message_loop)
            }
            _ => self.bad = true,
        }
        self.args(args, message_loop);
    }

    fn args(&mut self, args: &[CallArg<'a>], message_loop: bool) {
        for arg in args {
            match arg {
                CallArg::Pos(e) | CallArg::Kwarg(_, e) | CallArg::PosSplat(e) | CallArg::KwargSplat(e) => self.expr(e, message_loop),
            }
        }
    }

    fn expr(&mut self, e: &Expr<'a>, message_loop: bool) {
        match e {
            Expr::Var(v) => {
                // The message loop's `loop` as a whole (printed, passed on) could show anything.
                self.bad |= message_loop && v.id == "loop";
                self.reads.insert(v.id);
            }
            Expr::Const(_) => {}
            Expr::GetAttr(g) => match &g.expr {
                Expr::Var(v) if message_loop && v.id == "loop" => self.bad |= !PREFIX_LOOP_ATTRS.contains(&g.name),
                inner => self.expr(inner, message_loop),
            },
            Expr::GetItem(g) => {
                self.expr(&g.expr, message_loop);
                self.expr(&g.subscript_expr, message_loop);
            }
            Expr::Slice(s) => {
                self.expr(&s.expr, message_loop);
                for part in [&s.start, &s.stop, &s.step].into_iter().flatten() {
                    self.expr(part, message_loop);
                }
            }
            Expr::UnaryOp(u) => self.expr(&u.expr, message_loop),
            Expr::BinOp(b) => {
                self.expr(&b.left, message_loop);
                self.expr(&b.right, message_loop);
            }
            Expr::Compare(c) => {
                self.expr(&c.expr, message_loop);
                for op in &c.ops {
                    self.expr(&op.expr, message_loop);
                }
            }
            Expr::IfExpr(i) => {
                self.expr(&i.test_expr, message_loop);
                self.expr(&i.true_expr, message_loop);
                if let Some(f) = &i.false_expr {
                    self.expr(f, message_loop);
                }
            }
            // Filters and tests are the engine's and ours (tojson, string, trim): pure.
            Expr::Filter(f) => {
                if let Some(inner) = &f.expr {
                    self.expr(inner, message_loop);
                }
                self.args(&f.args, message_loop);
            }
            Expr::Test(t) => {
                self.expr(&t.expr, message_loop);
                self.args(&t.args, message_loop);
            }
            Expr::Call(c) => self.call(&c.expr, &c.args, message_loop),
            Expr::List(l) => l.items.iter().for_each(|item| self.expr(item, message_loop)),
            Expr::Tuple(t) => t.items.iter().for_each(|item| self.expr(item, message_loop)),
            Expr::Map(m) => m.keys.iter().chain(&m.values).for_each(|item| self.expr(item, message_loop)),
        }
    }
}

/// How much of the rendering was written when the message loop fetched each message: the
/// messages' list notes each fetch ([`Fetches::note`]), the [`Counting`] writer counts.
#[derive(Debug, Default)]
pub struct Fetches {
    written: AtomicUsize,
    at: Mutex<Vec<(usize, usize)>>,
}

impl Fetches {
    /// Message `i` was fetched: where the rendering is now.
    pub fn note(&self, i: usize) {
        if let Ok(mut at) = self.at.lock() {
            at.push((i, self.written.load(Ordering::Relaxed)));
        }
    }

    /// Where each message was fetched, if they were fetched once each, in order, from 0.
    pub fn offsets(&self) -> Option<Vec<usize>> {
        let at = self.at.lock().ok()?;
        at.iter().enumerate().all(|(k, &(i, _))| i == k).then(|| at.iter().map(|&(_, o)| o).collect())
    }
}

/// The rendering's bytes, counted into [`Fetches::written`] as they come.
pub struct Counting<'f> {
    pub out: Vec<u8>,
    pub fetches: &'f Fetches,
}

impl io::Write for Counting<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.out.extend_from_slice(buf);
        self.fetches.written.store(self.out.len(), Ordering::Relaxed);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
