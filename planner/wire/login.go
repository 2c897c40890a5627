package wire

import (
	"net"

	"github.com/dolthub/vitess/go/mysql"
)

// loginWatch wraps the AuthServer vitess checks logins with, to see each
// login end: one that succeeds stops its connection's login clock
// (connect_timeout no longer applies) and forgets its address's
// connection errors, as MySQL forgets them; one that fails (a wrong
// password, an unknown user) counts one against its address.
type loginWatch struct {
	mysql.AuthServer
	hosts *hostErrors
}

func (w loginWatch) AuthMethods() []mysql.AuthMethod {
	ms := w.AuthServer.AuthMethods()
	out := make([]mysql.AuthMethod, len(ms))
	for i, m := range ms {
		out[i] = watchedMethod{AuthMethod: m, hosts: w.hosts}
	}
	return out
}

type watchedMethod struct {
	mysql.AuthMethod
	hosts *hostErrors
}

func (m watchedMethod) HandleAuthPluginData(c *mysql.Conn, user string, serverData, clientData []byte, remote net.Addr) (mysql.Getter, error) {
	g, err := m.AuthMethod.HandleAuthPluginData(c, user, serverData, clientData, remote)
	if ac := admitted(c.Conn); ac != nil {
		if err == nil {
			ac.loggedIn()
			m.hosts.succeeded(ac.host)
		} else {
			m.hosts.failed(ac.host, admitSettings().maxConnectErrors)
		}
	}
	return g, err
}
