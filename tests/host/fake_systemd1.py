# SPDX-License-Identifier: GPL-2.0-or-later
"""The part of systemd's D-Bus API famfs-fused asks on SIGTERM, on a
private bus: which unit a pid belongs to, the unit's job and the job's
type (read from JOBFILE at each call: empty for no job).

    fake_systemd1.py ADDRESS JOBFILE READYFILE
"""
import sys

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

UNIT = "/org/freedesktop/systemd1/unit/famfs_40mnt_2dfamfs_2eservice"
JOB = "/org/freedesktop/systemd1/job/7"


class Manager(dbus.service.Object):
    @dbus.service.method("org.freedesktop.systemd1.Manager",
                         in_signature="u", out_signature="o")
    def GetUnitByPID(self, pid):
        return dbus.ObjectPath(UNIT)


class Properties(dbus.service.Object):
    def __init__(self, conn, path, get):
        super().__init__(conn, path)
        self.get = get

    @dbus.service.method("org.freedesktop.DBus.Properties",
                         in_signature="ss", out_signature="v")
    def Get(self, iface, prop):
        return self.get(iface, prop)


def main():
    addr, jobfile, ready = sys.argv[1:4]

    def job_type():
        with open(jobfile) as f:
            return f.read().strip()

    def unit_get(iface, prop):
        assert (iface, prop) == ("org.freedesktop.systemd1.Unit", "Job")
        t = job_type()
        return dbus.Struct((dbus.UInt32(7 if t else 0),
                            dbus.ObjectPath(JOB if t else "/")),
                           signature="uo")

    def job_get(iface, prop):
        assert (iface, prop) == ("org.freedesktop.systemd1.Job", "JobType")
        return dbus.String(job_type())

    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.bus.BusConnection(addr)
    name = dbus.service.BusName("org.freedesktop.systemd1", bus)
    objs = [Manager(bus, "/org/freedesktop/systemd1"),
            Properties(bus, UNIT, unit_get), Properties(bus, JOB, job_get)]
    open(ready, "w").close()
    GLib.MainLoop().run()
    del name, objs


if __name__ == "__main__":
    main()
