"""Chat on a few distinct topics, eight messages each, for the tests of models that never manage efforts:
the app proposes, opens and folds efforts from such a chat (the flows, the fold-once kill campaign, the
migrations' later chat)."""

TOPICS = {
    "japan": [
        "Let's plan a trip to Japan in April",
        "Which cities in Japan should we visit, Kyoto or Osaka?",
        "How many days in Kyoto for the temples?",
        "Book a ryokan in Kyoto near Gion, the locker code there is 5518",
        "What is the train pass price for Japan?",
        "Japan: should we fly into Tokyo Narita?",
        "Kyoto temples: Kinkakuji or Fushimi Inari first?",
        "Osaka food: takoyaki and okonomiyaki spots",
    ],
    "sourdough": [
        "My sourdough starter smells like acetone",
        "How often should I feed the sourdough starter?",
        "What flour is best for a sourdough starter, rye?",
        "The sourdough loaf came out flat, why?",
        "Sourdough bulk fermentation time at 22 degrees?",
        "Should I use a banneton for sourdough?",
        "How long to bake sourdough in a dutch oven?",
        "Sourdough crumb is gummy inside",
    ],
    "taxes": [
        "I need to file my tax return, self-employed",
        "Which tax deductions apply to a home office?",
        "Tax deadline for freelancers this year?",
        "Can I deduct my laptop on the tax return?",
        "Tax: quarterly estimated payments explained",
        "Tax receipts: how long must I keep them?",
        "Do I pay tax on foreign income?",
        "Tax software or an accountant?",
    ],
    "garden": [
        "My tomato plants in the garden have yellow leaves",
        "When should I prune the garden roses?",
        "Garden soil: how much compost per bed?",
        "Which garden vegetables grow well in shade?",
        "Garden hose keeps kinking, any fix?",
        "How deep to plant garlic in the garden?",
        "Garden slugs are eating the lettuce",
        "Best time to water the garden in summer?",
    ],
}
