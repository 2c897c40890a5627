package main

// Hostile probes of SQL's file functions and statements: SELECT ... INTO
// OUTFILE/DUMPFILE, LOAD_FILE and LOAD DATA INFILE must reach nothing
// outside DATA/files (the prefix, "..", and symlinks made on the host
// towards the outside directory) and write into no table's log.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// filefuncsLink makes a symlink at DATA/rel pointing to target, removed
// after the probe.
func filefuncsLink(h *hostileEnv, target, rel string) error {
	at := filepath.Join(h.data, rel)
	if err := os.MkdirAll(filepath.Dir(at), 0o755); err != nil {
		return err
	}
	if err := os.Symlink(target, at); err != nil {
		return err
	}
	h.closers = append(h.closers, func() { os.Remove(at) })
	return nil
}

// filefuncsRelOutside is the outside directory relative to DATA/files.
func filefuncsRelOutside(h *hostileEnv) string {
	rel, err := filepath.Rel(filepath.Join(h.data, "files"), h.outside)
	if err != nil {
		h.t.Fatal(err)
	}
	return rel
}

func filefuncsQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(s) + "'"
}

// filefuncsWrite runs SELECT 'x' INTO kind name, and reports an escape
// when the file appeared at outside (the harness also watches h.outside).
func filefuncsWrite(h *hostileEnv, kind, name, outside string) error {
	err := h.exec("SELECT 'hostile' INTO " + kind + " " + filefuncsQuote(name))
	if outside != "" {
		if _, serr := os.Lstat(outside); serr == nil {
			return h.escaped("%s %s wrote %s", kind, name, outside)
		}
	}
	return err
}

// filefuncsRead runs LOAD_FILE(name): it must give NULL, never the canary.
func filefuncsRead(h *hostileEnv, name string) error {
	rows, err := h.query("SELECT LOAD_FILE(?)", name)
	if err != nil {
		return err
	}
	got := fmt.Sprint(rows)
	if strings.Contains(got, hostileOutsideCanary) || strings.Contains(got, "root:x:") {
		return h.leaked("LOAD_FILE(%s) read %q", name, got)
	}
	if len(rows) != 1 || rows[0][0] != "NULL" {
		return h.wrong("LOAD_FILE(%s) = %v, want NULL", name, rows)
	}
	return nil
}

// filefuncsLoadData runs LOAD DATA INFILE name into a sink of its own,
// which must stay empty.
func filefuncsLoadData(h *hostileEnv, sink, name string) error {
	if err := h.exec("CREATE SINK " + sink + " INTO DELTA 'lake/" + sink + "' (v VARCHAR(64) NOT NULL, PRIMARY KEY (v))"); err != nil {
		return h.wrong("CREATE SINK %s: %v", sink, err)
	}
	defer h.exec("DROP SINK " + sink)
	err := h.exec("LOAD DATA INFILE " + filefuncsQuote(name) + " INTO TABLE " + sink)
	rows, qerr := h.query("SELECT v FROM " + sink)
	if qerr != nil {
		return h.wrong("SELECT from %s: %v", sink, qerr)
	}
	if strings.Contains(fmt.Sprint(rows), hostileOutsideCanary) {
		return h.leaked("LOAD DATA INFILE %s loaded %v", name, rows)
	}
	if len(rows) > 0 {
		return h.escaped("LOAD DATA INFILE %s loaded %v", name, rows)
	}
	return err
}

func init() {
	out := func(h *hostileEnv, name string) string { return filepath.Join(h.outside, name) }
	registerHostile(
		// DATA/files_evil shares the folder's prefix; here it leads outside.
		hostileProbe{name: "files/outfile-prefix", want: 1290, run: func(h *hostileEnv) error {
			if err := filefuncsLink(h, h.outside, "files_evil"); err != nil {
				return err
			}
			return filefuncsWrite(h, "OUTFILE", h.data+"/files_evil/prefix.txt", out(h, "prefix.txt"))
		}},
		hostileProbe{name: "files/dumpfile-prefix", want: 1290, run: func(h *hostileEnv) error {
			at := h.data + "/files_evil.txt"
			err := filefuncsWrite(h, "DUMPFILE", at, "")
			if _, serr := os.Lstat(at); serr == nil {
				os.Remove(at)
				return h.escaped("DUMPFILE wrote %s, beside DATA/files", at)
			}
			return err
		}},
		hostileProbe{name: "files/outfile-dotdot", want: 1290, run: func(h *hostileEnv) error {
			return filefuncsWrite(h, "OUTFILE", h.data+"/files/../../"+filepath.Base(h.outside)+"/dotdot.txt", out(h, "dotdot.txt"))
		}},
		hostileProbe{name: "files/dumpfile-dotdot-relative", want: 1290, run: func(h *hostileEnv) error {
			return filefuncsWrite(h, "DUMPFILE", "files/"+filefuncsRelOutside(h)+"/dotdot-rel.txt", out(h, "dotdot-rel.txt"))
		}},
		hostileProbe{name: "files/outfile-absolute-outside", want: 1290, run: func(h *hostileEnv) error {
			return filefuncsWrite(h, "OUTFILE", out(h, "absolute.txt"), out(h, "absolute.txt"))
		}},
		hostileProbe{name: "files/outfile-symlink", want: 1290, run: func(h *hostileEnv) error {
			if err := filefuncsLink(h, h.outside, "files/h_out"); err != nil {
				return err
			}
			return filefuncsWrite(h, "OUTFILE", "files/h_out/symlink.txt", out(h, "symlink.txt"))
		}},
		hostileProbe{name: "files/dumpfile-symlink-relative", want: 1290, run: func(h *hostileEnv) error {
			if err := filefuncsLink(h, filefuncsRelOutside(h), "files/h_outrel"); err != nil {
				return err
			}
			return filefuncsWrite(h, "DUMPFILE", h.data+"/files/h_outrel/symlink-rel.txt", out(h, "symlink-rel.txt"))
		}},
		// A dangling symlink inside, to a file outside that does not exist
		// yet: never created through the link.
		hostileProbe{name: "files/dumpfile-symlink-file", want: 1086, run: func(h *hostileEnv) error {
			if err := filefuncsLink(h, out(h, "dangling.txt"), "files/h_dangling"); err != nil {
				return err
			}
			return filefuncsWrite(h, "DUMPFILE", "files/h_dangling", out(h, "dangling.txt"))
		}},
		// The canary's own log, reached through a symlink in DATA/files.
		hostileProbe{name: "files/dumpfile-canary-log", want: 1290, run: func(h *hostileEnv) error {
			if err := filefuncsLink(h, "../lake/canary_d", "files/h_canary"); err != nil {
				return err
			}
			forged := `{"remove":{"path":"x.parquet","deletionTimestamp":0,"dataChange":true}}`
			entry := filepath.Join(h.data, "lake", "canary_d", "_delta_log", "00000000000000000099.json")
			err := h.exec("SELECT " + filefuncsQuote(forged) + " INTO DUMPFILE 'files/h_canary/_delta_log/00000000000000000099.json'")
			if _, serr := os.Stat(entry); serr == nil {
				os.Remove(entry)
				return h.escaped("DUMPFILE wrote %s", entry)
			}
			return err
		}},
		// The chain of the issue: a sink under DATA/files (refused, 1210, once
		// sink locations may not overlap DATA/files), then a forged add in its
		// _delta_log naming the outside secret.
		hostileProbe{name: "files/dumpfile-sink-log-chain", want: 1290, run: func(h *hostileEnv) error {
			forged := `{"add":{"path":"file://` + out(h, "secret.txt") + `","size":30,"modificationTime":0,"dataChange":true,"partitionValues":{}}}`
			log := filepath.Join(h.data, "files", "h_ff", "_delta_log")
			err := h.exec("CREATE SINK h_ff INTO DELTA 'files/h_ff' (id BIGINT NOT NULL, PRIMARY KEY (id))")
			switch hostileCode(err) {
			case 0:
				defer h.exec("DROP SINK h_ff")
				if err := h.exec("INSERT INTO h_ff VALUES (1)"); err != nil {
					return h.wrong("INSERT INTO h_ff: %v", err)
				}
			case 1210:
				// The folder a sink of an older lakesql would have left.
				if err := os.MkdirAll(log, 0o755); err != nil {
					return err
				}
			default:
				return h.wrong("CREATE SINK h_ff: %v", err)
			}
			h.closers = append(h.closers, func() { os.RemoveAll(filepath.Dir(log)) })
			err = h.exec("SELECT " + filefuncsQuote(forged) + " INTO DUMPFILE 'files/h_ff/_delta_log/00000000000000000002.json'")
			if _, serr := os.Stat(filepath.Join(log, "00000000000000000002.json")); serr == nil {
				return h.escaped("DUMPFILE wrote a commit into %s", log)
			}
			return err
		}},
		hostileProbe{name: "files/load_file-symlink", want: 0, run: func(h *hostileEnv) error {
			if err := filefuncsLink(h, out(h, "secret.txt"), "files/h_secret"); err != nil {
				return err
			}
			return filefuncsRead(h, "files/h_secret")
		}},
		hostileProbe{name: "files/load_file-symlink-relative", want: 0, run: func(h *hostileEnv) error {
			if err := filefuncsLink(h, filepath.Join(filefuncsRelOutside(h), "secret.txt"), "files/h_secretrel"); err != nil {
				return err
			}
			return filefuncsRead(h, h.data+"/files/h_secretrel")
		}},
		hostileProbe{name: "files/load_file-symlink-dir", want: 0, run: func(h *hostileEnv) error {
			if err := filefuncsLink(h, h.outside, "files/h_outdir"); err != nil {
				return err
			}
			return filefuncsRead(h, "files/h_outdir/secret.txt")
		}},
		hostileProbe{name: "files/load_file-prefix", want: 0, run: func(h *hostileEnv) error {
			if err := filefuncsLink(h, h.outside, "files_evil_read"); err != nil {
				return err
			}
			return filefuncsRead(h, h.data+"/files_evil_read/secret.txt")
		}},
		hostileProbe{name: "files/load_file-dotdot", want: 0, run: func(h *hostileEnv) error {
			return filefuncsRead(h, "files/"+filefuncsRelOutside(h)+"/secret.txt")
		}},
		hostileProbe{name: "files/load_file-etc-passwd", want: 0, run: func(h *hostileEnv) error {
			if err := filefuncsLink(h, "/etc/passwd", "files/h_passwd"); err != nil {
				return err
			}
			if err := filefuncsRead(h, "files/h_passwd"); err != nil {
				return err
			}
			return filefuncsRead(h, "/etc/passwd")
		}},
		hostileProbe{name: "files/load-data-symlink", want: 1290, run: func(h *hostileEnv) error {
			if err := filefuncsLink(h, out(h, "secret.txt"), "files/h_ld_secret"); err != nil {
				return err
			}
			return filefuncsLoadData(h, "h_ld_symlink", "files/h_ld_secret")
		}},
		hostileProbe{name: "files/load-data-prefix", want: 1290, run: func(h *hostileEnv) error {
			if err := filefuncsLink(h, h.outside, "files_evil_ld"); err != nil {
				return err
			}
			return filefuncsLoadData(h, "h_ld_prefix", h.data+"/files_evil_ld/secret.txt")
		}},
		hostileProbe{name: "files/load-data-dotdot", want: 1290, run: func(h *hostileEnv) error {
			return filefuncsLoadData(h, "h_ld_dotdot", "files/"+filefuncsRelOutside(h)+"/secret.txt")
		}},
		// What stays allowed: a file in a subfolder, through a relative
		// symlink that stays inside, read back by LOAD_FILE.
		hostileProbe{name: "files/outfile-inside", want: 0, run: func(h *hostileEnv) error {
			if err := os.MkdirAll(filepath.Join(h.data, "files", "h_sub"), 0o755); err != nil {
				return err
			}
			h.closers = append(h.closers, func() { os.RemoveAll(filepath.Join(h.data, "files", "h_sub")) })
			if err := filefuncsLink(h, "h_sub", "files/h_in"); err != nil {
				return err
			}
			if err := h.exec("SELECT 'inside' INTO DUMPFILE 'files/h_in/inside.txt'"); err != nil {
				return err
			}
			rows, err := h.query("SELECT LOAD_FILE(?)", h.data+"/files/h_sub/inside.txt")
			if err != nil {
				return err
			}
			if len(rows) != 1 || rows[0][0] != "inside" {
				return h.wrong("LOAD_FILE of the file written = %v", rows)
			}
			return nil
		}},
	)
}
