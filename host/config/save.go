package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/gofrs/flock"
	"github.com/google/renameio/v2"

	"github.com/domo-agent/domo/policy"
)

// object is a JSON object that keeps its keys in the order it read them,
// so that saving a setting leaves the rest of a person's file as it was.
type object []member

type member struct {
	Key   string
	Value json.RawMessage
}

func (o *object) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return errors.New("want a JSON object")
	}
	*o = (*o)[:0]
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return err
		}
		key := t.(string)
		if _, dup := o.get(key); dup {
			// Which one counts differs between readers: refuse to guess.
			return fmt.Errorf("key %q appears twice; keep one", key)
		}
		*o = append(*o, member{key, v})
	}
	_, err := dec.Token()
	return err
}

func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.Key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(m.Value)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func (o object) get(key string) (json.RawMessage, bool) {
	for _, m := range o {
		if m.Key == key {
			return m.Value, true
		}
	}
	return nil, false
}

// set replaces key's value in place, or appends it.
func (o *object) set(key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	for i, m := range *o {
		if m.Key == key {
			(*o)[i].Value = b
			return nil
		}
	}
	*o = append(*o, member{key, b})
	return nil
}

func (o *object) delete(key string) {
	*o = slices.DeleteFunc(*o, func(m member) bool { return m.Key == key })
}

// resolveLinks follows symbolic links from path to the file they lead to,
// even when that file does not exist yet.
func resolveLinks(path string) (string, error) {
	for range 40 {
		fi, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) || err == nil && fi.Mode()&fs.ModeSymlink == 0 {
			return path, nil
		}
		if err != nil {
			return "", fmt.Errorf("read the config: %w", err)
		}
		dest, err := os.Readlink(path)
		if err != nil {
			return "", fmt.Errorf("read the config's link: %w", err)
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(path), dest)
		}
		path = dest
	}
	return "", fmt.Errorf("%s: too many levels of symbolic links", path)
}

// child returns the object under key, empty when absent.
func (o object) child(key string) (object, error) {
	var c object
	if v, ok := o.get(key); ok && string(v) != "null" {
		if err := json.Unmarshal(v, &c); err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
	}
	return c, nil
}

// SetMode saves the permission mode in the file at path.
func SetMode(path string, mode policy.Mode) error {
	return updatePermissions(path, func(p *object) error { return p.set("mode", mode) })
}

// SetPolicy saves a policy for a group, or for a single tool when target
// is "server/tool". An empty policy removes the setting, so the default
// (or, for a tool, its group's policy) applies again.
func SetPolicy(path, target string, pol policy.GroupPolicy) error {
	section := "groups"
	if bytes.ContainsRune([]byte(target), '/') {
		section = "tools"
	}
	return updatePermissions(path, func(p *object) error {
		m, err := p.child(section)
		if err != nil {
			return fmt.Errorf("permissions.%w", err)
		}
		if pol == "" {
			m.delete(target)
			if len(m) == 0 {
				p.delete(section)
				return nil
			}
		} else if err := m.set(target, pol); err != nil {
			return err
		}
		return p.set(section, m)
	})
}

// updatePermissions edits the "permissions" section of the file at path.
func updatePermissions(path string, edit func(*object) error) error {
	return update(path, func(top *object) error {
		perms, err := top.child("permissions")
		if err != nil {
			return err
		}
		if err := edit(&perms); err != nil {
			return err
		}
		return top.set("permissions", perms)
	})
}

// update edits the file at path, keeping every field edit does not touch,
// under a lock so that two edits at once do not lose one, and saves it
// atomically. The result must load.
func update(path string, edit func(*object) error) error {
	// Write through a symlink (a config kept with one's dotfiles) rather
	// than replacing it with a file, and lock what is written, so that
	// edits through the link and through the file exclude each other.
	target, err := resolveLinks(path)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		return fmt.Errorf("create the config directory: %w", err)
	}
	lock := flock.New(target + ".lock")
	if err := lock.Lock(); err != nil {
		return fmt.Errorf("lock the config: %w", err)
	}
	defer lock.Unlock()

	perm := fs.FileMode(0o600)
	b, err := os.ReadFile(target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		b = []byte("{}")
	case err != nil:
		return fmt.Errorf("read the config: %w", err)
	default:
		if fi, err := os.Stat(target); err == nil {
			perm = fi.Mode().Perm()
		}
	}
	var top object
	if err := json.Unmarshal(b, &top); err != nil {
		return fmt.Errorf("%s is not a JSON object (%v); fix it by hand first", path, err)
	}
	if err := edit(&top); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	// Encode without HTML escaping: "&" in a URL stays "&".
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(top); err != nil {
		return err
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, bytes.TrimSpace(out.Bytes()), "", "  "); err != nil {
		return err
	}
	pretty.WriteByte('\n')
	if _, err := Parse(bytes.NewReader(pretty.Bytes())); err != nil {
		return fmt.Errorf("the change would make the config invalid: %w", err)
	}
	if err := renameio.WriteFile(target, pretty.Bytes(), perm); err != nil {
		return fmt.Errorf("save the config: %w", err)
	}
	return nil
}
