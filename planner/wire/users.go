package wire

// The user store: DATA/users.json holds each user's mysql_native_password
// hash, SHA1(SHA1(password)) written the way MySQL writes it ("*" and 40
// upper-case hex digits). Passwords themselves are never stored.

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
	"sync"

	"github.com/dolthub/vitess/go/mysql"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
)

// UsersFile is the user store's file name in the data directory.
const UsersFile = "users.json"

// RootUser is the administrative user the server creates.
const RootUser = "root"

// User is one stored user.
type User struct {
	Name string `json:"name"`
	// Plugin is the authentication plugin: always mysql_native_password.
	Plugin string `json:"plugin"`
	// Hash is "*" + hex(SHA1(SHA1(password))), upper case.
	Hash string `json:"hash"`
}

type usersFile struct {
	Users []User `json:"users"`
}

// Users is the persisted user store.
type Users struct {
	path string
	mu   sync.RWMutex
	byID map[string]User
}

// NativePasswordHash returns MySQL's mysql_native_password hash of pw.
func NativePasswordHash(pw string) string {
	h1 := sha1.Sum([]byte(pw))
	h2 := sha1.Sum(h1[:])
	return "*" + strings.ToUpper(hex.EncodeToString(h2[:]))
}

// LoadUsers reads DIR/users.json; a missing file is an empty store.
func LoadUsers(dir string) (*Users, error) {
	u := &Users{path: filepath.Join(dir, UsersFile), byID: map[string]User{}}
	b, err := os.ReadFile(u.path)
	if errors.Is(err, os.ErrNotExist) {
		return u, nil
	}
	if err != nil {
		return nil, fmt.Errorf("lakesql: user store: %w", err)
	}
	var f usersFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("lakesql: user store %s: %w", u.path, err)
	}
	for _, x := range f.Users {
		if _, err := decodeHash(x.Hash); err != nil {
			return nil, fmt.Errorf("lakesql: user store %s: user %q: %w", u.path, x.Name, err)
		}
		u.byID[x.Name] = x
	}
	return u, nil
}

// Has reports whether the user exists.
func (u *Users) Has(name string) bool {
	u.mu.RLock()
	defer u.mu.RUnlock()
	_, ok := u.byID[name]
	return ok
}

// SetPassword stores name's password hash and saves the store.
func (u *Users) SetPassword(name, pw string) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.byID[name] = User{Name: name, Plugin: string(mysql.MysqlNativePassword), Hash: NativePasswordHash(pw)}
	return u.saveLocked()
}

// CheckPassword reports whether pw is name's password.
func (u *Users) CheckPassword(name, pw string) bool {
	u.mu.RLock()
	x, ok := u.byID[name]
	u.mu.RUnlock()
	return ok && subtle.ConstantTimeCompare([]byte(x.Hash), []byte(NativePasswordHash(pw))) == 1
}

func (u *Users) saveLocked() error {
	f := usersFile{}
	for _, x := range u.byID {
		f.Users = append(f.Users, x)
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	tmp := u.path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("lakesql: user store: %w", err)
	}
	if err := os.Rename(tmp, u.path); err != nil {
		return fmt.Errorf("lakesql: user store: %w", err)
	}
	return nil
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

// The vitess side: an AuthServer offering mysql_native_password, checking
// the client's scramble against the stored hash.

type authServer struct{ users *Users }

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
func (a *authServer) UserEntryWithHash(_ []*x509.Certificate, salt []byte, user string, authResponse []byte, _ net.Addr) (mysql.Getter, error) {
	a.users.mu.RLock()
	x, ok := a.users.byID[user]
	a.users.mu.RUnlock()
	if ok {
		if h, err := decodeHash(x.Hash); err == nil && mysql.VerifyHashedMysqlNativePassword(authResponse, salt, h) {
			return userData(user), nil
		}
	}
	return nil, mysql.NewSQLError(mysql.ERAccessDeniedError, mysql.SSAccessDeniedError,
		"Access denied for user '%v' (using password: %s)", user, yesNo(len(authResponse) > 0))
}

func yesNo(b bool) string {
	if b {
		return "YES"
	}
	return "NO"
}

type userData string

func (u userData) Get() *querypb.VTGateCallerID { return &querypb.VTGateCallerID{Username: string(u)} }
