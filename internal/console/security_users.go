package console

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
)

// SCRAM users: who has credentials, for which mechanisms and with how
// many iterations. The broker never returns a password or a salt, and
// the page never echoes the password a form sent.

// securityMinIterations and securityMaxIterations are the bounds Kafka
// puts on a SCRAM credential's iterations.
const (
	securityMinIterations = 4096
	securityMaxIterations = 16384
)

var securityMechanisms = []securityChoice{{"SCRAM-SHA-256", int8(kadm.ScramSha256)}, {"SCRAM-SHA-512", int8(kadm.ScramSha512)}}

type securityUserCred struct {
	Mechanism  string
	Iterations int32
}

type securityUser struct {
	User  string
	Creds []securityUserCred
	Err   string
}

type securityUsersView struct {
	securityTab
	Users      []securityUser
	Pager      sharedPager
	Mechanisms []securityChoice
	Iterations int
	FUser      string // the form's user, filled in from ?user= to update one
}

// serveSecurityUsers lists the SCRAM users (one
// DescribeUserSCRAMCredentials for all).
func (c *Console) serveSecurityUsers(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	v := securityUsersView{securityTab: securityTab{Tab: "users", Done: q.Get("done")}, Mechanisms: securityMechanisms,
		Iterations: securityMinIterations, FUser: q.Get("user")}
	ctx, cancel := c.ctx(r)
	defer cancel()
	described, err := c.admin(r).DescribeUserSCRAMs(ctx)
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	all := make([]securityUser, 0, len(described))
	for _, d := range described {
		u := securityUser{User: d.User}
		if d.Err != nil {
			u.Err = d.Err.Error()
			if d.ErrMessage != "" {
				u.Err += ": " + d.ErrMessage
			}
		}
		for _, ci := range d.CredInfos {
			u.Creds = append(u.Creds, securityUserCred{Mechanism: ci.Mechanism.String(), Iterations: ci.Iterations})
		}
		sort.Slice(u.Creds, func(i, j int) bool { return u.Creds[i].Mechanism < u.Creds[j].Mechanism })
		all = append(all, u)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].User < all[j].User })
	v.Pager = sharedRequestPage(r.URL, len(all), securityPageSize)
	v.Users = all[v.Pager.From:v.Pager.To]
	c.renderSection(w, r, "security_users", "security", v)
}

// securityUserForm reads the user and the mechanism of a form.
func securityUserForm(r *http.Request) (string, kadm.ScramMechanism, error) {
	user := strings.TrimSpace(r.PostFormValue("user"))
	if user == "" {
		return "", 0, badRequest("the user is empty: name the user whose credential to set")
	}
	mech, err := securityPick(securityMechanisms, "mechanism", r.PostFormValue("mechanism"))
	return user, kadm.ScramMechanism(mech), err
}

// securityAlteredErr is the one user's error of an
// AlterUserSCRAMCredentials answer.
func securityAlteredErr(res kadm.AlteredUserSCRAMs, user string) error {
	a, ok := res[user]
	if !ok {
		return fmt.Errorf("the broker did not answer for user %q", user)
	}
	return securityAnswerErr(a.Err, a.ErrMessage)
}

// securityAnswerErr is the error of one entry of an alter answer, with
// the broker's message: a 400, the broker refused what the form asked.
func securityAnswerErr(err error, msg string) error {
	if err != nil && msg != "" {
		return statusErr(http.StatusBadRequest, fmt.Errorf("%w: %s", err, msg))
	}
	return err
}

// serveSecurityUserUpsert sets a user's credential for one mechanism
// (AlterUserSCRAMCredentials upsertion; the client salts the password,
// so it never crosses the wire).
func (c *Console) serveSecurityUserUpsert(w http.ResponseWriter, r *http.Request) {
	user, mech, err := securityUserForm(r)
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	iters := securityMinIterations
	if s := strings.TrimSpace(r.PostFormValue("iterations")); s != "" {
		if iters, err = strconv.Atoi(s); err != nil {
			c.fail(w, r, nil, badRequest("iterations %q is not a whole number", s))
			return
		}
	}
	if iters < securityMinIterations || iters > securityMaxIterations {
		c.fail(w, r, nil, badRequest("iterations %d: a SCRAM credential needs %d to %d", iters, securityMinIterations, securityMaxIterations))
		return
	}
	password := r.PostFormValue("password")
	if password == "" {
		c.fail(w, r, nil, badRequest("the password is empty"))
		return
	}
	ctx, cancel := c.ctx(r)
	defer cancel()
	res, err := c.admin(r).AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: user, Mechanism: mech, Iterations: int32(iters), Password: password}})
	if err == nil {
		err = securityAlteredErr(res, user)
	}
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	http.Redirect(w, r, "/security/users?done="+urlQueryEscape(fmt.Sprintf("Set %s's %s credential (%d iterations)", user, mech, iters)), http.StatusSeeOther)
}

// serveSecurityUserDelete deletes one mechanism's credential of a user,
// after a confirmation.
func (c *Console) serveSecurityUserDelete(w http.ResponseWriter, r *http.Request) {
	user, mech, err := securityUserForm(r)
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	if !c.securityConfirm(w, r, "users", fmt.Sprintf("Delete %s's %s credential? Clients logging in as %s with it will fail.", user, mech, user),
		"/security/users", "user", "mechanism") {
		return
	}
	ctx, cancel := c.ctx(r)
	defer cancel()
	res, err := c.admin(r).AlterUserSCRAMs(ctx, []kadm.DeleteSCRAM{{User: user, Mechanism: mech}}, nil)
	if err == nil {
		err = securityAlteredErr(res, user)
	}
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	http.Redirect(w, r, "/security/users?done="+urlQueryEscape(fmt.Sprintf("Deleted %s's %s credential", user, mech)), http.StatusSeeOther)
}
