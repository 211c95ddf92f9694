package agentline_test

import (
	"errors"
	"testing"

	"github.com/agentline/agentline"
)

// The phone field is the first tel field, else a field named phone or
// phone_number; a form naming a campaign needs one, and lead capture.
func TestFormPhoneFieldAndCampaign(t *testing.T) {
	id := int64(3)
	cases := []struct {
		name   string
		fields []agentline.FormField
		mode   agentline.FormMode
		phone  string
		ok     bool
	}{
		{"tel field", []agentline.FormField{{Name: "phone", Label: "P"}, {Name: "mobile", Label: "M", Type: agentline.FieldTel}}, "", "mobile", true},
		{"named phone", []agentline.FormField{{Name: "name", Label: "N"}, {Name: "phone", Label: "P"}}, "", "phone", true},
		{"named phone_number", []agentline.FormField{{Name: "phone_number", Label: "P"}}, "", "phone_number", true},
		{"none", []agentline.FormField{{Name: "email", Label: "E", Type: agentline.FieldEmail}}, "", "", false},
		{"live chat", []agentline.FormField{{Name: "phone", Label: "P", Type: agentline.FieldTel}}, agentline.FormLiveChat, "phone", false},
	}
	for _, c := range cases {
		f := agentline.FormSettings{Mode: c.mode, Fields: c.fields, CampaignID: &id}
		fd, found := f.PhoneField()
		if fd.Name != c.phone || found != (c.phone != "") {
			t.Errorf("%s: phone field %q %v", c.name, fd.Name, found)
		}
		err := f.Validate()
		if (err == nil) != c.ok {
			t.Errorf("%s: %v", c.name, err)
		}
		var e *agentline.Error
		if err != nil && (!errors.As(err, &e) || e.Field != "settings.form.campaign_id") {
			t.Errorf("%s: error names %v", c.name, err)
		}
	}
}
