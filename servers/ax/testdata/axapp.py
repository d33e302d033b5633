#!/usr/bin/python3
"""domo-ax's GTK 3 test app.

Every widget's callback appends one line to the file named by --out, so a
test can see that an action really reached the app. SIGUSR1 blocks the main
loop for --freeze seconds, as a hung app would.
"""
import argparse
import signal
import sys
import time

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import GLib  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--out", required=True)
parser.add_argument("--title", default="Domo Test App")
parser.add_argument("--name", default="domo-test-app")
parser.add_argument("--freeze", type=float, default=30)
parser.add_argument("--rows", type=int, default=40)
args = parser.parse_args()

# The accessible application's name is the program name: set it before GTK
# starts.
GLib.set_prgname(args.name)
GLib.set_application_name(args.name)

from gi.repository import Gdk, Gtk  # noqa: E402


def log(line):
    with open(args.out, "a") as f:
        f.write(line + "\n")


def labelled(widget, name):
    widget.get_accessible().set_name(name)
    return widget


win = Gtk.Window(title=args.title)
win.set_default_size(640, 700)
win.connect("destroy", Gtk.main_quit)
box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=4, margin=8)
win.add(box)

box.pack_start(Gtk.Label(label="Domo test app"), False, False, 0)

entry = labelled(Gtk.Entry(), "Name")
entry.connect("changed", lambda e: log("name=" + e.get_text()))
entry.connect("activate", lambda e: log("name activated=" + e.get_text()))
box.pack_start(entry, False, False, 0)

save = Gtk.Button(label="Save")
save.connect("clicked", lambda b: log("saved name=" + entry.get_text()))
box.pack_start(save, False, False, 0)

subscribe = Gtk.CheckButton(label="Subscribe")
subscribe.connect("toggled", lambda c: log("subscribe=%s" % c.get_active()))
box.pack_start(subscribe, False, False, 0)

colour = labelled(Gtk.ComboBoxText(), "Colour")
for c in ("Red", "Green", "Blue"):
    colour.append_text(c)
colour.set_active(0)
colour.connect("changed", lambda c: log("colour=" + c.get_active_text()))
box.pack_start(colour, False, False, 0)

volume = labelled(Gtk.SpinButton.new_with_range(0, 100, 1), "Volume")
volume.set_value(20)
volume.connect("value-changed", lambda s: log("volume=%d" % s.get_value_as_int()))
box.pack_start(volume, False, False, 0)

details = Gtk.Expander(label="Details")
details.add(Gtk.Label(label="Hidden details"))
details.connect("notify::expanded", lambda e, _: log("details expanded=%s" % e.get_expanded()))
box.pack_start(details, False, False, 0)

disabled = Gtk.Button(label="Disabled")
disabled.set_sensitive(False)
box.pack_start(disabled, False, False, 0)

# A plain event box: it offers no accessible action, so acting on it takes
# a pointer click at its centre.
area = Gtk.EventBox()
area.add(Gtk.Label(label="Click area"))
area.set_size_request(200, 40)
labelled(area, "Click area")
area.connect("button-press-event", lambda w, ev: log("area clicked button=%d" % ev.button) or True)
box.pack_start(area, False, False, 0)

rows = Gtk.ListBox()
rows.set_selection_mode(Gtk.SelectionMode.SINGLE)
for i in range(1, args.rows + 1):
    rows.add(Gtk.Label(label="Item %d" % i, xalign=0))
rows.connect("row-selected", lambda lb, row: row and log("selected=" + row.get_child().get_text()))
scroller = Gtk.ScrolledWindow()
scroller.set_size_request(-1, 200)
scroller.add(rows)
box.pack_start(scroller, True, True, 0)

accel = Gtk.AccelGroup()
win.add_accel_group(accel)
key, mods = Gtk.accelerator_parse("<Control><Shift>t")
accel.connect(key, mods, 0, lambda *a: log("shortcut ctrl+shift+t") or True)


def freeze():
    log("freezing")
    time.sleep(args.freeze)
    log("thawed")
    return GLib.SOURCE_CONTINUE


GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGUSR1, freeze)
GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, lambda: Gtk.main_quit() or GLib.SOURCE_REMOVE)

win.show_all()
entry.grab_focus()
win.present()
GLib.idle_add(lambda: log("ready") and False)
Gtk.main()
sys.exit(0)
