package tools

// helpCenter is the retrieval test's corpus: the help center of Brightkettle,
// a made-up kitchenware shop, written for this test. Each question names the
// one article that answers it; the wording of questions is a customer's, not
// the article's.
var helpCenter = []struct{ title, body string }{
	{"Delivery times", `# Delivery times

Orders placed before 2 pm on a working day leave our warehouse the same day. Standard delivery within Germany takes two to three working days; to other EU countries it takes three to six working days.

## Carriers

We ship with DHL and DPD. Large items such as stand mixers travel with a freight carrier who calls you to agree on a delivery slot.

## Express

Express delivery arrives on the next working day when you order before noon.`},
	{"International shipping and customs", `# International shipping and customs

We deliver to the United Kingdom, Switzerland, Norway, the United States and Canada as well as every EU country.

Orders sent outside the European Union may be charged import duties, customs fees and local taxes when they enter the country. These charges are set by the destination country's customs office and are paid by the recipient; we cannot predict or refund them.

For the United Kingdom and Switzerland we collect import VAT at checkout, so nothing is due on arrival.`},
	{"Shipping costs", `# Shipping costs

Standard shipping costs 4.95 € per order within Germany and 9.95 € to other EU countries. Express shipping costs 14.95 €.

## Free shipping

Standard shipping is free for orders over 60 € within Germany and over 120 € to the rest of the EU. The threshold is counted after discounts and before shipping.`},
	{"Tracking your parcel", `# Tracking your parcel

As soon as your order leaves the warehouse we email you a tracking number and a link to follow the parcel on the carrier's website.

You can also see the current status of every order under My orders in your account. Tracking information can take up to 24 hours to appear after dispatch.`},
	{"Lost or damaged parcels", `# Lost or damaged parcels

If your parcel arrives damaged or broken, please keep the packaging and take photos of the box and the product. Send them to us within 14 days through the contact form and we will send a replacement free of charge.

If tracking shows your parcel as delivered but you never received it, check with neighbours first, then contact us: we open an investigation with the carrier and refund or reship once it is confirmed lost.`},
	{"Returns policy", `# Returns policy

You can return any unused item within 30 days of delivery, no reasons needed. Items must be clean and in their original packaging where possible.

## How to return

Start a return from My orders, print the prepaid return label and drop the parcel at any DHL point. Returns within Germany are free; from other countries the return shipping is deducted from your refund.

Personalised engravings and opened food items cannot be returned.`},
	{"Refunds", `# Refunds

We refund your money within five business days after your return reaches our warehouse. The refund goes back to the original payment method: card refunds may take another three to five days to show on your statement, PayPal refunds appear immediately.

Gift card purchases are refunded as a new gift card.`},
	{"Exchanges", `# Exchanges

Ordered the wrong size or colour? You can swap it for another size or colour of the same product free of charge. Choose Exchange instead of Return when you start a return in My orders, and we ship the new item as soon as the original is scanned by the carrier.

For a different product, return the item and place a new order.`},
	{"Warranty", `# Warranty

All Brightkettle appliances come with a three year guarantee from the date of purchase; cookware and knives carry a lifetime guarantee against manufacturing defects.

The warranty does not cover wear and tear, limescale damage, misuse or accidental drops.`},
	{"Warranty claims and repairs", `# Warranty claims and repairs

If an appliance stops working or breaks within the guarantee period, file a claim under My orders > Report a problem. Describe the fault and attach your receipt or order number.

We either repair the appliance at our service centre, with free pickup, or send a replacement. Repairs usually take ten working days.`},
	{"Payment methods", `# Payment methods

We accept Visa, Mastercard and American Express, PayPal, Apple Pay, Google Pay, SEPA direct debit and bank transfer (prepayment).

Your card is charged when the order ships, not when you place it.`},
	{"Pay in instalments", `# Pay in instalments

With SplitPay you can spread the cost of orders over 100 € across 3, 6 or 12 monthly payments. Three months are interest free; longer plans carry interest shown at checkout.

Choose SplitPay as the payment method at checkout; approval takes a few seconds and needs no paperwork.`},
	{"Invoices and VAT", `# Invoices and VAT

Every order comes with an invoice showing VAT, sent by email when the order ships and available as a PDF under My orders.

Business customers can add a company name and VAT ID at checkout; the invoice then carries them, and orders to other EU countries are invoiced without German VAT under the reverse charge rule.`},
	{"Discount codes", `# Discount codes

Enter a discount or promo code in the basket before you pay. Only one code can be used per order, and codes do not apply to gift cards or items already on sale.

If a code is rejected, check its expiry date and the minimum order value printed with it. Codes cannot be added after the order has been placed.`},
	{"Gift cards", `# Gift cards

Brightkettle gift cards come in values from 10 € to 500 €, as an e-mail voucher or a printed card.

Gift cards are valid for three years from purchase and can be used online and in our stores, in several orders until the balance is used up. They cannot be exchanged for cash.`},
	{"Creating an account", `# Creating an account

You do not need an account to order: guest checkout asks only for your address and e-mail.

An account lets you follow orders, start returns in a few clicks, save addresses and collect loyalty points. Sign up with your e-mail address and a password, or with Google or Apple.`},
	{"Resetting your password", `# Resetting your password

Forgot your password? Click Forgot password on the sign-in page and enter your e-mail address. We send a link that lets you choose a new password; it is valid for one hour.

No e-mail? Check your spam folder, and make sure you use the address your account was created with.`},
	{"Two-factor authentication", `# Two-factor authentication

Protect your account with a second step at sign-in. Under Account > Security, turn on two-factor authentication and scan the QR code with an authenticator app, or choose a code by text message.

Keep the backup codes we show you: they let you sign in if you lose your phone.`},
	{"Deleting your account and your data", `# Deleting your account and your data

You can close your account at any time under Account > Privacy > Delete account. We then erase your personal data, except invoices, which the law requires us to keep for ten years.

To get a copy of all the data we hold about you, or to have it deleted without signing in, write to privacy@brightkettle.example. We answer such GDPR requests within 30 days.`},
	{"Newsletter and e-mail preferences", `# Newsletter and e-mail preferences

Our newsletter brings recipes, new products and offers once a week. Unsubscribe with the link at the bottom of any newsletter, or under Account > E-mail preferences, where you can also choose which marketing e-mails you receive.

Order and shipping e-mails are always sent, since they are part of your purchase.`},
	{"Descaling your kettle", `# Descaling your kettle

Hard water leaves white limescale deposits inside kettles, which make them slower and noisier. Descale every four weeks in hard water areas.

Fill the kettle half full with equal parts water and white vinegar, or use citric acid, bring it to the boil and leave it for an hour. Empty it, rinse twice and boil fresh water once before use.`},
	{"Caring for cast iron", `# Caring for cast iron

Cast iron pans and skillets need seasoning: a thin layer of baked-on oil that stops rust and food sticking.

Wash by hand with hot water, dry straight away on the hob and wipe a few drops of oil over the surface. If rust appears, scrub it off with steel wool, then re-season the pan in the oven at 250 °C for an hour.`},
	{"Dishwasher safe products", `# Dishwasher safe products

Stainless steel saucepans, glass lids and our porcelain mugs are dishwasher safe.

Knives, cast iron, wooden boards and non-stick pans should be washed by hand: the dishwasher dulls blades, strips seasoning and wears coatings. Kettles and other electrical appliances must never go in the dishwasher.`},
	{"Induction compatibility", `# Induction compatibility

All our stainless steel and cast iron pots and pans work on induction hobs, as well as on gas, electric and ceramic cooktops. Look for the induction symbol on the base.

Our aluminium and copper ranges do not work on induction unless marked Induction base.`},
	{"Knife sharpening service", `# Knife sharpening service

Send us your Brightkettle knives and we sharpen them professionally: free once a year for knives bought from us, 5 € per knife otherwise.

Request a sharpening box under Services; your blunt knives come back razor sharp within two weeks.`},
	{"Spare parts", `# Spare parts

We sell replacement parts for most products: kettle lids and limescale filters, teapot lids, blender jars, mixer bowls and beaters, and pan handles.

Find them on the product page under Spare parts, or ask customer service with the model number printed on the base.`},
	{"Product recalls and safety notices", `# Product recalls and safety notices

Safety comes first. When we find a defect that could be dangerous we recall the affected batch and publish a notice here.

Current recall: Brightkettle Classic kettle, model BK-200, batches 2301 to 2315, because the switch can overheat. Check the batch number under the base; if it is affected, stop using it and we replace it free of charge.`},
	{"Changing or cancelling an order", `# Changing or cancelling an order

You can cancel or change an order for one hour after placing it, under My orders, as long as it has not been packed.

After that, the order can no longer be changed; you can refuse the delivery or return the items for a refund once they arrive.`},
	{"Pre-orders and back in stock", `# Pre-orders and back in stock

When a product is sold out, click Notify me on its page and we e-mail you as soon as it is available again, usually within four weeks.

Some new products can be pre-ordered: we charge you when they ship, and the expected date is shown on the product page.`},
	{"Stores and opening hours", `# Stores and opening hours

Visit our stores in Berlin (Torstraße 12), Hamburg (Lange Reihe 40) and Munich (Sendlinger Straße 7).

All stores open Monday to Friday 10:00 to 19:00 and Saturday 10:00 to 18:00; they are closed on Sundays and public holidays.`},
	{"Contacting customer service", `# Contacting customer service

Our customer service team answers by live chat and phone on +49 30 1234567, Monday to Friday 8:00 to 20:00 and Saturday 9:00 to 14:00. Outside these hours, send the contact form and we reply within one business day.

Prefer to talk to a real person rather than the chat assistant? Type agent in the chat and a human colleague takes over.`},
	{"Business and bulk orders", `# Business and bulk orders

Restaurants, offices and hotels can order in bulk with volume discounts from 50 units of the same item, and pay on invoice with 30 day terms.

Contact our business team at business@brightkettle.example with the products and quantities you need for a quote; custom logo printing on mugs is available from 100 pieces.`},
	{"Loyalty points", `# Loyalty points

Members of Brightkettle Club earn one point for every euro spent. 100 points are worth a 5 € voucher.

Redeem your points in the basket: tick Use my points before paying. Points expire two years after you earn them.`},
	{"Price match", `# Price match

Seen the same product for less at another retailer in Germany? We match the price within 14 days of your purchase and refund the difference.

Send us a link to the cheaper offer; it must be the same model, new, in stock and sold by a German shop, not a marketplace seller.`},
	{"Packaging and sustainability", `# Packaging and sustainability

Our boxes are made of recycled cardboard and padded with paper, not plastic, so you can put the whole packaging in the paper recycling bin.

Old appliances can be handed in at our stores for free recycling, and we plant a tree for every order over 100 €.`},
	{"Using appliances abroad", `# Using appliances abroad

Our electrical appliances are built for 220 to 240 volts and European plugs. In the United States and Canada, where the voltage is 110 to 120 volts, kettles and toasters will not heat properly even with a plug adapter; you need a voltage converter.

Cookware and knives work everywhere.`},
}

var helpCenterQuestions = []struct{ question, title string }{
	{"How long does delivery take?", "Delivery times"},
	{"Will I have to pay import fees if I order to Canada?", "International shipping and customs"},
	{"How much do I need to spend to get free shipping?", "Shipping costs"},
	{"Where is my package right now?", "Tracking your parcel"},
	{"My order arrived broken, what should I do?", "Lost or damaged parcels"},
	{"Can I send back something I bought three weeks ago?", "Returns policy"},
	{"When will I get my money back?", "Refunds"},
	{"The apron is the wrong size, can I swap it?", "Exchanges"},
	{"How many years of guarantee does a toaster have?", "Warranty"},
	{"My toaster stopped working, how do I get it repaired?", "Warranty claims and repairs"},
	{"Do you take PayPal?", "Payment methods"},
	{"Can I pay in monthly instalments?", "Pay in instalments"},
	{"I need an invoice with our company VAT ID", "Invoices and VAT"},
	{"My promo code does not work", "Discount codes"},
	{"Do gift cards expire?", "Gift cards"},
	{"Do I need an account to order?", "Creating an account"},
	{"I forgot my password", "Resetting your password"},
	{"How do I turn on two-factor sign-in?", "Two-factor authentication"},
	{"Please erase all my personal data", "Deleting your account and your data"},
	{"Stop sending me marketing emails", "Newsletter and e-mail preferences"},
	{"There is white limescale inside my kettle", "Descaling your kettle"},
	{"My cast iron skillet is rusty", "Caring for cast iron"},
	{"Can I put the saucepans in the dishwasher?", "Dishwasher safe products"},
	{"Will this pot work on my induction cooktop?", "Induction compatibility"},
	{"My knives are blunt, can you sharpen them?", "Knife sharpening service"},
	{"I lost the lid of my teapot, can I buy a new one?", "Spare parts"},
	{"Is my kettle affected by the recall?", "Product recalls and safety notices"},
	{"Can I cancel my order after placing it?", "Changing or cancelling an order"},
	{"When will the sold out mixer be available again?", "Pre-orders and back in stock"},
	{"What time does the Hamburg shop open on Saturday?", "Stores and opening hours"},
	{"How can I talk to a human?", "Contacting customer service"},
	{"We want to buy 200 mugs for our office", "Business and bulk orders"},
	{"How do I use my reward points?", "Loyalty points"},
	{"I found it cheaper on another website", "Price match"},
	{"Is the packaging recyclable?", "Packaging and sustainability"},
	{"Can I use my kettle in the USA?", "Using appliances abroad"},
	{"What is your phone number?", "Contacting customer service"},
	{"Do you ship to Switzerland?", "International shipping and customs"},
	{"How long is a gift voucher valid?", "Gift cards"},
	{"Can I get next day delivery?", "Delivery times"},
}
