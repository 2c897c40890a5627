package wire

// Accounts. They are go-mysql-server's mysql database (sql/mysql_db:
// CREATE USER, GRANT, REVOKE, roles), kept in DATA/privileges.db in
// go-mysql-server's own serialisation, rewritten whole after each change
// (a temporary file, synced, renamed over the old one). Passwords
// themselves are never stored: an account holds its mysql_native_password
// hash, "*" + hex(SHA1(SHA1(password))).
//
// Earlier versions kept users in DATA/users.json, every one of them
// allowed everything. On the first start without privileges.db that file
// is migrated: root becomes root@'%' with all privileges and GRANT OPTION,
// every other user name@'%' with all privileges on *.* (what they had), each
// with its password hash; the file is then renamed users.json.migrated,
// kept as the record of what was migrated and never read again.

import (
	"crypto/rand"
	"crypto/sha1"
	"crypto/subtle"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/dolthub/vitess/go/mysql"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"

	"github.com/lakesql/lakesql/internal/fsync"
)

// PrivilegesFile is the file in the data directory that holds the
// accounts and their privileges.
const PrivilegesFile = "privileges.db"

// UsersFile is the user store of earlier versions, migrated into
// PrivilegesFile on the first start and then renamed UsersFile+MigratedSuffix.
const UsersFile = "users.json"

// MigratedSuffix ends the name a migrated UsersFile is renamed to.
const MigratedSuffix = ".migrated"

// RootUser is the administrative user the server creates.
const RootUser = "root"

// rootHost is root's host: root may connect from anywhere (a server
// beyond loopback needs a root password, see ErrOpenServer).
const rootHost = "%"

// legacyUser is one user of UsersFile.
type legacyUser struct {
	Name string `json:"name"`
	// Plugin is always mysql_native_password.
	Plugin string `json:"plugin"`
	// Hash is "*" + hex(SHA1(SHA1(password))), upper case.
	Hash string `json:"hash"`
}

type legacyUsersFile struct {
	Users []legacyUser `json:"users"`
}

// NativePasswordHash returns MySQL's mysql_native_password hash of pw.
func NativePasswordHash(pw string) string {
	h1 := sha1.Sum([]byte(pw))
	h2 := sha1.Sum(h1[:])
	return "*" + strings.ToUpper(hex.EncodeToString(h2[:]))
}

// storedAccounts is what the data directory holds: PrivilegesFile's
// content, or else UsersFile's users (to migrate), or nothing.
type storedAccounts struct {
	dir    string
	data   []byte
	legacy []legacyUser
}

func readAccounts(dir string) (*storedAccounts, error) {
	st := &storedAccounts{dir: dir}
	b, err := os.ReadFile(filepath.Join(dir, PrivilegesFile))
	switch {
	case err == nil:
		st.data = b
		return st, nil
	case !errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("lakesql: accounts: %w", err)
	}
	path := filepath.Join(dir, UsersFile)
	b, err = os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, fmt.Errorf("lakesql: user store: %w", err)
	}
	var f legacyUsersFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("lakesql: user store %s: %w", path, err)
	}
	for _, x := range f.Users {
		if _, err := decodeHash(x.Hash); err != nil {
			return nil, fmt.Errorf("lakesql: user store %s: user %q: %w", path, x.Name, err)
		}
	}
	st.legacy = f.Users
	return st, nil
}

// hasRoot reports whether the stored accounts include root.
func (st *storedAccounts) hasRoot() (bool, error) {
	if st.legacy != nil {
		for _, u := range st.legacy {
			if u.Name == RootUser {
				return true, nil
			}
		}
		return false, nil
	}
	db := mysql_db.CreateEmptyMySQLDb()
	if err := db.LoadData(gms.NewEmptyContext(), st.data); err != nil {
		return false, fmt.Errorf("lakesql: accounts %s: %w", filepath.Join(st.dir, PrivilegesFile), err)
	}
	rd := db.Reader()
	defer rd.Close()
	_, ok := rd.GetUser(mysql_db.UserPrimaryKey{User: RootUser, Host: rootHost})
	return ok, nil
}

// load puts the stored accounts into db (migrating UsersFile), sets root's
// password (a given one, or a generated one when root is missing), and
// makes db persist itself into the data directory from then on. It returns
// the generated password, if any.
func (st *storedAccounts) load(db *mysql_db.MySQLDb, rootPassword string) (generated string, err error) {
	ctx := gms.NewEmptyContext()
	db.SetPersister(filePersister{path: filepath.Join(st.dir, PrivilegesFile)})
	if err := db.LoadData(ctx, st.data); err != nil {
		return "", fmt.Errorf("lakesql: accounts %s: %w", filepath.Join(st.dir, PrivilegesFile), err)
	}
	ed := db.Editor()
	defer ed.Close()
	changed := st.data == nil && st.legacy != nil
	for _, u := range st.legacy {
		ed.PutUser(migratedUser(u))
	}
	rootKey := mysql_db.UserPrimaryKey{User: RootUser, Host: rootHost}
	root, ok := ed.GetUser(rootKey)
	switch {
	case rootPassword != "":
		if !ok || subtle.ConstantTimeCompare([]byte(root.AuthString), []byte(NativePasswordHash(rootPassword))) != 1 {
			// The set finds an entry to replace by all its fields:
			// the old one goes first.
			ed.RemoveUser(rootKey)
			ed.PutUser(rootUser(NativePasswordHash(rootPassword), root))
			changed = true
		}
	case !ok:
		if generated, err = generatePassword(); err != nil {
			return "", err
		}
		ed.PutUser(rootUser(NativePasswordHash(generated), nil))
		changed = true
	}
	if changed {
		if err := db.Persist(ctx, ed); err != nil {
			return "", err
		}
	}
	if st.legacy != nil {
		old := filepath.Join(st.dir, UsersFile)
		if err := os.Rename(old, old+MigratedSuffix); err != nil {
			return "", fmt.Errorf("lakesql: user store: %w", err)
		}
	}
	return generated, nil
}

// rootUser is root@'%' with every privilege and the given hash; old, when
// set, is the account it replaces (its other fields are kept).
func rootUser(hash string, old *mysql_db.User) *mysql_db.User {
	u := &mysql_db.User{
		User:         RootUser,
		Host:         rootHost,
		PrivilegeSet: mysql_db.NewPrivilegeSetWithAllPrivileges(),
		Plugin:       string(mysql.MysqlNativePassword),
		IsSuperUser:  true,
	}
	if old != nil {
		c := *old
		u = &c
	}
	u.AuthString = hash
	u.PasswordLastChanged = time.Now().UTC()
	return u
}

// migratedUser is a user of UsersFile as an account: root as rootUser,
// any other with every privilege on *.* but GRANT OPTION, as before.
func migratedUser(x legacyUser) *mysql_db.User {
	if x.Name == RootUser {
		return rootUser(x.Hash, nil)
	}
	ps := mysql_db.NewPrivilegeSetWithAllPrivileges()
	ps.RemoveGlobalStatic(gms.PrivilegeType_GrantOption)
	return &mysql_db.User{
		User:                x.Name,
		Host:                rootHost,
		PrivilegeSet:        ps,
		Plugin:              string(mysql.MysqlNativePassword),
		AuthString:          x.Hash,
		PasswordLastChanged: time.Now().UTC(),
	}
}

// filePersister writes the serialised accounts to path atomically.
type filePersister struct{ path string }

func (p filePersister) Persist(_ *gms.Context, data []byte) error {
	tmp := p.path + ".tmp"
	if err := writeSynced(tmp, data); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("lakesql: accounts: %w", err)
	}
	if err := os.Rename(tmp, p.path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("lakesql: accounts: %w", err)
	}
	if err := fsync.Dir(filepath.Dir(p.path)); err != nil {
		return fmt.Errorf("lakesql: accounts: %w", err)
	}
	return nil
}

func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	return errors.Join(werr, f.Sync(), f.Close())
}

func decodeHash(s string) ([]byte, error) {
	if !strings.HasPrefix(s, "*") || len(s) != 41 {
		return nil, errors.New("not a mysql_native_password hash (\"*\" and 40 hex digits)")
	}
	return hex.DecodeString(s[1:])
}

// generatePassword returns a random 20-character password.
func generatePassword() (string, error) {
	const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789"
	out := make([]byte, 20)
	for i := range out {
		n, err := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		if err != nil {
			return "", err
		}
		out[i] = alphabet[n.Int64()]
	}
	return string(out), nil
}

// The vitess side: an AuthServer offering mysql_native_password alone (as
// before the accounts moved into the mysql database; a client that asks
// for caching_sha2_password is switched to it), checking the client's
// scramble against the account's hash.

type authServer struct{ db *mysql_db.MySQLDb }

func (a *authServer) AuthMethods() []mysql.AuthMethod {
	return []mysql.AuthMethod{mysql.NewMysqlNativeAuthMethod(a, a)}
}

func (a *authServer) DefaultAuthMethodDescription() mysql.AuthMethodDescription {
	return mysql.MysqlNativePassword
}

// HandleUser implements mysql.UserValidator: every user name goes on to
// the password check, so an unknown user is refused like a wrong password.
func (a *authServer) HandleUser(string, net.Addr) bool { return true }

// UserEntryWithHash implements mysql.HashStorage.
func (a *authServer) UserEntryWithHash(_ []*x509.Certificate, salt []byte, user string, authResponse []byte, addr net.Addr) (mysql.Getter, error) {
	rd := a.db.Reader()
	u := a.db.GetUser(rd, user, addrHost(addr), false)
	rd.Close()
	if u != nil && !u.Locked && !u.IsRole && u.Plugin == string(mysql.MysqlNativePassword) {
		if u.AuthString == "" {
			if len(authResponse) == 0 {
				return userData(user), nil
			}
		} else if h, err := decodeHash(u.AuthString); err == nil && mysql.VerifyHashedMysqlNativePassword(authResponse, salt, h) {
			return userData(user), nil
		}
	}
	return nil, mysql.NewSQLError(mysql.ERAccessDeniedError, mysql.SSAccessDeniedError,
		"Access denied for user '%v' (using password: %s)", user, yesNo(len(authResponse) > 0))
}

// addrHost is the host an account's host is matched against: the
// client's IP address (go-mysql-server's mysql database takes 127.0.0.1
// and ::1 for localhost).
func addrHost(addr net.Addr) string {
	switch a := addr.(type) {
	case *net.TCPAddr:
		return a.IP.String()
	case *net.UnixAddr:
		return "localhost"
	}
	if addr == nil {
		return ""
	}
	if h, _, err := net.SplitHostPort(addr.String()); err == nil {
		return h
	}
	return addr.String()
}

func yesNo(b bool) string {
	if b {
		return "YES"
	}
	return "NO"
}

type userData string

func (u userData) Get() *querypb.VTGateCallerID { return &querypb.VTGateCallerID{Username: string(u)} }
