package server

import (
	"os"
	"path/filepath"
)

// writeFileAtomic replaces path with data: a temporary file beside it,
// written and synced, renamed over path, then the directory synced, so a
// crash leaves either the old file or the new one.
func writeFileAtomic(path, data string) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	err = func() error {
		defer f.Close()
		if _, err := f.WriteString(data); err != nil {
			return err
		}
		if err := f.Sync(); err != nil {
			return err
		}
		return f.Chmod(0o644)
	}()
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		err = d.Sync()
		d.Close()
		return err
	}
	return nil
}
