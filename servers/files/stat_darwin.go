package files

import (
	"io/fs"
	"syscall"
	"time"
)

// ownerAndTimes reads what fs.FileInfo does not carry: owner, last access
// and last status change.
func ownerAndTimes(fi fs.FileInfo) (uid, gid *uint32, atime, ctime time.Time) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil, nil, time.Time{}, time.Time{}
	}
	return &st.Uid, &st.Gid, time.Unix(st.Atimespec.Unix()), time.Unix(st.Ctimespec.Unix())
}
