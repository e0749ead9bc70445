"""Labelled conversations for the topic proposer (issue 30: "New topic? Ctrl+Y opens effort
'capital-joke-peru'" after a few jokes and one-off questions).

``SMALL_TALK``: jokes, greetings, one-off questions and near misses (two questions that happen to
share a word, a follow-up or two on an answer): no effort should be proposed at any point.
``TOPICS``: a topic people work on over several exchanges (a plan, a bug, a project), with the
follow-ups a person writes ("how long should I bake it?", "and the second one?"), some after a
greeting or an aside: an effort should be proposed by the end. Each exchange is (user, reply),
the replies as short as a chatty model's. Written by hand for the test and
``benchmarks/bench_topics.py``; none of it was tuned against after being written.
"""

from __future__ import annotations

Chat = list[tuple[str, str]]

SMALL_TALK: dict[str, Chat] = {
    "jokes-and-peru": [
        ("tell me a joke", "Why don't scientists trust atoms? Because they make up everything!"),
        ("haha. by the way, what's the capital of Peru?", "The capital of Peru is Lima."),
        ("another joke please", "What do you call a fake noodle? An impasta!"),
        ("lol. how many people live in Lima?", "About 10 million people live in the Lima metropolitan area."),
        ("ok one more joke", "I told my wife she was drawing her eyebrows too high. She looked surprised."),
        ("good one", "Glad you liked it!"),
    ],
    "greetings": [
        ("hi!", "Hello! How can I help you today?"),
        ("how are you doing?", "I'm doing well, thanks for asking. How about you?"),
        ("pretty good, a bit tired", "Sorry to hear you're tired. Maybe a short break would help."),
        ("yeah maybe coffee", "A coffee sounds like a good idea."),
        ("thanks, talk later", "Anytime. Enjoy your coffee!"),
    ],
    "trivia-run": [
        ("who wrote Hamlet?", "William Shakespeare wrote Hamlet, around 1600."),
        ("how tall is Mount Everest?", "Mount Everest is 8,849 metres tall."),
        ("what's the speed of light?", "About 299,792 kilometres per second in a vacuum."),
        ("when did the Berlin wall fall?", "On 9 November 1989."),
        ("what's the largest ocean?", "The Pacific Ocean is the largest."),
        ("who painted the Mona Lisa?", "Leonardo da Vinci painted the Mona Lisa."),
    ],
    "conversions": [
        ("how many centimetres in an inch?", "One inch is 2.54 centimetres."),
        ("what's 15% of 80?", "15% of 80 is 12."),
        ("convert 30 celsius to fahrenheit", "30 °C is 86 °F."),
        ("how many ounces in a pound?", "There are 16 ounces in a pound."),
        ("what's 7 times 8", "7 times 8 is 56."),
    ],
    "jokes-only": [
        ("tell me a joke", "Why did the scarecrow win an award? He was outstanding in his field."),
        ("another one", "Why don't eggs tell jokes? They'd crack each other up."),
        ("haha more", "What do you call a bear with no teeth? A gummy bear."),
        ("one more please", "Why did the math book look sad? It had too many problems."),
        ("lol ok last one", "How does a penguin build its house? Igloos it together."),
    ],
    "weather-and-mood": [
        ("it's raining again here", "Sorry to hear that. Rainy days can be cosy with a good book."),
        ("any good book recommendation?", "The Remains of the Day by Kazuo Ishiguro is a lovely read."),
        ("what day is it today?", "I don't have access to today's date, but your device's clock will show it."),
        ("I feel like pizza tonight", "Pizza sounds great. Margherita is a classic."),
        ("what's a good movie for tonight?", "Spirited Away is a wonderful film for a quiet evening."),
    ],
    "near-miss-peru": [
        ("what's the capital of Peru?", "Lima is the capital of Peru."),
        ("what's the tallest mountain in Peru?", "Huascarán, at 6,768 metres, is the tallest mountain in Peru."),
        ("how do you say thank you in Japanese?", "Arigatou gozaimasu."),
        ("tell me a fun fact", "Octopuses have three hearts."),
        ("what's the boiling point of water at altitude?", "It drops about 1 °C per 300 metres of altitude."),
    ],
    "definitions": [
        ("what does 'ubiquitous' mean?", "Ubiquitous means present or found everywhere."),
        ("what's a synonym for happy?", "Joyful, cheerful or content."),
        ("how do you spell necessary?", "N-E-C-E-S-S-A-R-Y."),
        ("what's the plural of cactus?", "Cacti, or cactuses."),
        ("what does 'serendipity' mean?", "Serendipity is finding something good without looking for it."),
    ],
    "random-facts": [
        ("tell me a random fact", "Honey never spoils: edible honey was found in Egyptian tombs."),
        ("cool. another fact?", "Bananas are berries, but strawberries are not."),
        ("how far is the moon?", "About 384,400 kilometres from Earth."),
        ("why is the sky blue?", "Sunlight scatters off air molecules, and blue light scatters most."),
        ("who invented the telephone?", "Alexander Graham Bell is credited with inventing the telephone."),
    ],
    "mixed-asides": [
        ("good morning!", "Good morning! What can I do for you?"),
        ("what time is it in Tokyo when it's noon in London?", "It's 8 or 9 in the evening in Tokyo."),
        ("tell me a pun", "I used to be a banker, but I lost interest."),
        ("how do I boil an egg?", "Put it in boiling water for about 7 minutes for a medium egg."),
        ("what's the population of Canada?", "About 40 million people."),
        ("thanks!", "You're welcome!"),
    ],
    "translations": [
        ("how do you say cat in French?", "Cat in French is 'chat'."),
        ("and dog in German?", "Dog in German is 'Hund'."),
        ("what's the Spanish word for apple?", "Apple in Spanish is 'manzana'."),
        ("how do you say hello in Italian?", "'Ciao' or 'buongiorno'."),
        ("what does 'danke' mean?", "'Danke' means 'thank you' in German."),
    ],
    "riddles": [
        ("give me a riddle", "What has keys but can't open locks? A piano."),
        ("haha nice. what's heavier, a kilo of feathers or a kilo of steel?", "They weigh the same: a kilo."),
        ("who was the first person on the moon?", "Neil Armstrong, in 1969."),
        ("another riddle", "What gets wetter the more it dries? A towel."),
        ("what's 2 to the power of 10?", "2 to the power of 10 is 1024."),
    ],
    "sports-scores": [
        ("who won the world cup in 2014?", "Germany won the 2014 FIFA World Cup."),
        ("how long is a marathon?", "A marathon is 42.195 kilometres."),
        ("what's the fastest animal?", "The peregrine falcon, diving at over 300 km/h."),
        ("how many players on a rugby team?", "Fifteen in rugby union, thirteen in rugby league."),
        ("who has the most grand slam titles?", "Novak Djokovic holds the men's record."),
    ],
    "two-followups-then-away": [
        ("what's the capital of Australia?", "Canberra is the capital of Australia."),
        ("why not Sydney?", "Canberra was chosen as a compromise between Sydney and Melbourne."),
        ("tell me a joke", "Why did the bicycle fall over? It was two tired."),
        ("what's the square root of 144?", "12."),
        ("what colour do you get mixing blue and yellow?", "Green."),
    ],
    "quick-recipes-asides": [
        ("how long do I boil pasta?", "Usually 8 to 12 minutes, see the packet."),
        ("what's a good name for a goldfish?", "Bubbles, Goldie or Finn."),
        ("how many calories in a banana?", "About 105 calories in a medium banana."),
        ("recommend a podcast", "Radiolab is a great science podcast."),
        ("what year did the Titanic sink?", "1912."),
    ],
    "emoji-chat": [
        ("lol", "😄"),
        ("that was funny", "Glad it made you laugh!"),
        ("ok", "Anything else?"),
        ("nah just bored", "Want a fun fact or a joke?"),
        ("sure a fact", "A group of flamingos is called a flamboyance."),
        ("nice", "Right?"),
    ],
}

TOPICS: dict[str, Chat] = {
    "japan-trip": [
        ("Let's plan a trip to Japan in April", "April is cherry blossom season; Kyoto and Tokyo are popular."),
        ("Which cities should we visit, Kyoto or Osaka?", "Both: Kyoto for temples, Osaka for food; they are close."),
        ("How many days in Kyoto for the temples?", "Three days covers the main temples of Kyoto."),
        ("Book a ryokan in Kyoto near Gion", "Gion has several ryokans; book early for April."),
        (
            "Is the rail pass worth it for Kyoto and Osaka?",
            "Only with a Tokyo round trip; otherwise buy single tickets.",
        ),
    ],
    "sourdough": [
        ("My sourdough starter smells like acetone", "Acetone means it is hungry: feed it more often."),
        ("How often should I feed it?", "Twice a day at room temperature, once a day in the fridge."),
        ("What flour is best for the starter?", "Rye or whole wheat flour makes an active starter."),
        ("The loaf came out flat, why?", "Likely underproofed dough or a weak starter."),
        ("How long should the bulk fermentation be?", "About 4 to 6 hours at 24 °C, until the dough grows 50%."),
    ],
    "python-bug": [
        (
            "My Python script crashes with KeyError: 'user_id'",
            "The dict has no 'user_id' key: check where the dict is built.",
        ),
        ("The dict comes from json.loads of an API response", "Print the response: the API may return 'userId'."),
        ("You're right, it's userId in the response", "Use data.get('userId') or map the keys after json.loads."),
        ("Now the script fails later with a TypeError", "Show the traceback; the userId may be None."),
        ("It says NoneType has no attribute lower", "userId is None for some records: skip or default them."),
    ],
    "vegetable-garden": [
        ("I want to start a vegetable garden this spring", "Start small: a few raised beds with easy vegetables."),
        ("Which vegetables are easy for a beginner?", "Tomatoes, lettuce, radishes, beans and zucchini."),
        ("Where should the raised beds go?", "Somewhere with at least six hours of sun."),
        ("How deep should the beds be?", "30 centimetres is enough for most vegetables."),
        ("When do I plant the tomatoes?", "After the last frost, when nights stay above 10 °C."),
        ("Should I water them every day?", "Water deeply two or three times a week rather than daily."),
    ],
    "tax-return": [
        ("I need to file my tax return as a freelancer", "Gather income records, invoices and expense receipts."),
        ("Can I deduct my home office?", "Yes, if the room is used only for work."),
        ("What about my laptop?", "A laptop used for work is deductible, spread over its lifetime."),
        ("When is the deadline for the return?", "Usually 31 July for freelancers; check your tax office."),
        ("Should I use tax software or an accountant?", "Software is fine for simple returns."),
    ],
    "car-noise": [
        ("My car makes a grinding noise when braking", "That often means the brake pads are worn down."),
        ("How much do new brake pads cost?", "Around 100 to 300 euros per axle, fitted."),
        ("Could it be the rotors instead?", "Yes: deep grooves or a wobble in the pedal point to the rotors."),
        ("Can I replace the pads myself?", "With a jack, a socket set and a C-clamp, yes."),
        ("Which pads should I buy?", "Ceramic pads are quiet and last long for a daily car."),
    ],
    "learn-spanish": [
        ("I want to learn Spanish in six months", "Aim for 30 minutes a day: vocabulary, listening, speaking."),
        ("Which app is best for Spanish?", "Duolingo for habits, plus a Spanish podcast for listening."),
        ("How do I practise speaking?", "Find a Spanish tandem partner or a tutor online."),
        ("Should I learn Spanish grammar first?", "Learn grammar as you go, starting with present tense verbs."),
        ("How many Spanish words do I need?", "About 1,000 words cover most daily conversation."),
    ],
    "wedding-plan": [
        ("We're planning our wedding for next June", "Congratulations! Start with the budget and the guest list."),
        ("Our budget is 15,000 euros", "Then the venue and catering will take about half of it."),
        ("How many guests can we invite with that budget?", "Around 60 to 80 guests, depending on catering."),
        ("Should we book the venue first?", "Yes, popular June venues book a year ahead."),
        ("What about the photographer?", "Book the photographer right after the venue."),
    ],
    "interview-prep": [
        ("I have a job interview for a data analyst role on Friday", "Let's prepare: SQL, a case study, behaviour."),
        ("What SQL questions do they usually ask?", "Joins, GROUP BY, window functions and a tricky filter."),
        ("Can you give me a window function question?", "Rank each customer's orders by date with ROW_NUMBER."),
        ("How would I answer that one?", "ROW_NUMBER() OVER (PARTITION BY customer ORDER BY order_date)."),
        ("And for the behavioural part?", "Use the STAR method with two stories about data projects."),
    ],
    "moving-house": [
        ("We're moving to a new apartment next month", "Make a moving checklist: boxes, movers, address change."),
        ("Should we hire movers or rent a van?", "For a two-room apartment a van and friends may do."),
        ("How many boxes will we need?", "About 40 to 60 boxes for a two-room apartment."),
        ("When should I change my address?", "A week before the move, and set up mail forwarding."),
        ("What do we pack first?", "Books and things you rarely use; the kitchen last."),
    ],
    "hello-then-marathon": [
        ("hi there", "Hello! What's on your mind?"),
        ("I signed up for my first marathon in October", "Great goal! A 16-week training plan works well."),
        ("How many runs a week should I do?", "Four runs: two easy runs, one tempo run and a long run."),
        ("How long should the long run get?", "Build the long run up to about 32 kilometres."),
        ("What pace for the easy runs?", "Easy runs at a pace where you can still talk."),
        ("Should I do strength training too?", "Twice a week: squats, lunges and core work."),
    ],
    "wifi-network": [
        ("My home wifi keeps dropping every evening", "Evening drops often mean channel congestion."),
        ("How do I change the wifi channel?", "In the router settings, under wireless: try 1, 6 or 11."),
        ("The router is a Fritzbox 7590", "On the Fritzbox: Wi-Fi, Radio Channel, set it manually."),
        ("Should I use the 5 GHz band instead?", "Yes, 5 GHz is less crowded, with shorter range."),
        ("The wifi still drops in the bedroom", "Add a mesh repeater between the router and the bedroom."),
    ],
    "laptop-purchase": [
        ("I need a new laptop for programming, budget 1,500", "Look for 16 GB RAM, a good keyboard, long battery."),
        ("MacBook Air or a ThinkPad?", "The MacBook Air has the best battery; the ThinkPad runs Linux well."),
        ("Is 16 GB of RAM enough for Docker?", "For a few containers yes; 32 GB if you run many."),
        ("Which ThinkPad model fits the budget?", "A ThinkPad T14 with 32 GB fits 1,500."),
        ("Does the T14 have a good screen?", "Take the 2.2K screen option on the T14."),
    ],
    "react-bug": [
        ("My React component re-renders in an infinite loop", "Usually a setState inside useEffect without deps."),
        ("Here's the useEffect: it calls setItems(data)", "Add a dependency array so the effect runs once."),
        ("With [] it runs once but the items never update", "Put the value the fetch depends on in the array."),
        ("It depends on the filter prop", "Then use [filter]: the effect reruns when the filter changes."),
        ("Now it works, but the list flickers", "Keep the old items while loading instead of clearing them."),
    ],
    "birthday-party": [
        ("I'm organising a surprise birthday party for my sister", "Fun! Pick a date, a place and a guest list."),
        ("The party will be at our parents' garden", "A garden party needs a rain plan: a tent or gazebo."),
        ("How do I keep it a surprise?", "Ask a friend to take her out until the guests arrive."),
        ("What food for 25 guests at the party?", "A barbecue with salads, and a big cake."),
        ("Which cake does she like? Chocolate I think", "A chocolate cake with her name on it, then."),
    ],
    "aside-then-sql": [
        ("what's the capital of Peru?", "Lima."),
        ("thanks. I have a slow SQL query on the orders table", "Show the query and the EXPLAIN plan."),
        ("It filters orders by customer_id and created_at", "An index on (customer_id, created_at) would help."),
        ("The orders table has 50 million rows", "Create the index CONCURRENTLY to avoid locking the table."),
        ("EXPLAIN still shows a sequential scan", "Run ANALYZE on orders so the planner sees the new index."),
    ],
    "cover-letter": [
        ("Help me write a cover letter for a UX designer job", "Sure: who is the company and what's your experience?"),
        ("It's for Spotify, I have 3 years in UX design", "Open with why Spotify, then one UX project in detail."),
        ("Which project should I describe in the letter?", "The checkout redesign: it had measurable results."),
        ("The redesign raised conversion by 12%", "Lead the paragraph with the 12% conversion figure."),
        ("How long should the cover letter be?", "One page, three or four paragraphs."),
    ],
    "paint-bedroom": [
        ("I want to paint my bedroom this weekend", "Nice: choose the colour, then prepare the walls."),
        ("Which colour makes a small room look bigger?", "Light colours such as soft white or pale grey."),
        ("How many coats will it need?", "Two coats, with a primer if the old paint is dark."),
        ("How long between them?", "Wait about four hours between coats."),
        ("Do I need to tape the edges?", "Yes, painter's tape gives clean lines at the ceiling."),
    ],
    "guitar-practice": [
        (
            "I just bought an acoustic guitar, where do I start?",
            "Learn to tune it, then the chords G, C, D and E minor.",
        ),
        ("My fingertips hurt after practising chords", "That's normal for the first weeks; calluses will form."),
        ("How long should I practise each day?", "Fifteen to thirty minutes daily beats one long session."),
        ("The G chord sounds buzzy, why is that?", "Press just behind the fret and arch your fingers."),
        ("Any easy song with those chords?", "Knockin' on Heaven's Door uses G, D, A minor and C."),
    ],
    "dinner-party": [
        ("I'm cooking dinner for 8 friends on Saturday", "Plan a starter, a main and a dessert you can prepare ahead."),
        ("One friend is vegetarian", "Make the main vegetarian-friendly, like a mushroom risotto."),
        ("Risotto for 8 sounds hard to time", "Then a vegetable lasagne: it can be baked ahead."),
        ("What starter goes with the lasagne?", "A light salad with fennel and orange."),
        ("And dessert after the lasagne?", "Tiramisu: made the day before, no oven needed."),
    ],
}

# Written after the rule was settled, and evaluated once (not tuned against): the held-out figures.
HELD_OUT_SMALL_TALK: dict[str, Chat] = {
    "coffee-break": [
        ("hey, taking a coffee break", "Enjoy it! Anything I can help with meanwhile?"),
        ("what's the difference between a latte and a flat white?", "A flat white has less milk foam than a latte."),
        ("who invented the espresso machine?", "Angelo Moriondo patented an early espresso machine in 1884."),
        ("tell me something cheerful", "Sea otters hold hands while sleeping so they don't drift apart."),
        ("aww. ok back to work", "Good luck with the rest of your day!"),
    ],
    "quiz-night": [
        ("quick quiz question: what's the smallest planet?", "Mercury is the smallest planet."),
        ("which element has the symbol Fe?", "Iron has the symbol Fe."),
        ("who composed the Four Seasons?", "Antonio Vivaldi."),
        ("how many bones in the human body?", "An adult has 206 bones."),
        ("what's the longest river in the world?", "The Nile, though some measure the Amazon as longer."),
    ],
    "jokes-and-cats": [
        ("make me laugh", "Why did the cat sit on the computer? To keep an eye on the mouse."),
        ("do cats really sleep 16 hours a day?", "Yes, cats sleep 12 to 16 hours a day."),
        ("haha another", "What do you call a pile of cats? A meowntain."),
        ("what's the capital of Norway?", "Oslo."),
        ("nice one", "Thanks!"),
    ],
    "small-chat-de": [
        ("hallo!", "Hallo! Wie kann ich helfen?"),
        ("wie spät ist es in New York?", "Das hängt von deiner Zeitzone ab; New York ist UTC-5."),
        ("erzähl mir einen Witz", "Was sitzt auf einem Baum und winkt? Ein Huhu."),
        ("was ist die Hauptstadt von Kanada?", "Ottawa."),
        ("danke, tschüss", "Tschüss!"),
    ],
    "one-offs-with-overlap": [
        ("how many legs does a spider have?", "Spiders have eight legs."),
        ("and an insect?", "Insects have six legs."),
        ("what's the tallest building?", "The Burj Khalifa in Dubai, at 828 metres."),
        ("how do I say goodbye in Japanese?", "Sayonara."),
        ("what year was the first iPhone?", "2007."),
    ],
    "music-chitchat": [
        ("what's your favourite song?", "I don't have favourites, but many people love Bohemian Rhapsody."),
        ("who sang it?", "Queen, with Freddie Mercury on vocals."),
        ("how old is the Eiffel tower?", "It was completed in 1889."),
        ("what rhymes with orange?", "Almost nothing; 'door hinge' is a near rhyme."),
        ("lol", "😄"),
    ],
    "procrastinating": [
        ("I should be working but I'm bored", "A short walk might refresh you."),
        ("what's a fun word?", "'Flibbertigibbet': a flighty, talkative person."),
        ("how many countries are there?", "195 countries, counting the UN members and observers."),
        ("tell me a tongue twister", "She sells seashells by the seashore."),
        ("ok I'll get back to it", "Good luck!"),
    ],
    "animals-trivia": [
        ("how fast can a cheetah run?", "Up to about 110 km/h in short bursts."),
        ("what's the biggest animal ever?", "The blue whale."),
        ("do penguins have knees?", "Yes, hidden inside their bodies."),
        ("how long do parrots live?", "Large parrots can live 50 years or more."),
        ("can dogs see colours?", "Dogs see blue and yellow, but not red and green well."),
    ],
}

HELD_OUT_TOPICS: dict[str, Chat] = {
    "kitchen-renovation": [
        ("We're renovating our kitchen, budget around 20k", "Start with the layout, then cabinets and worktops."),
        ("Should we keep the current layout?", "Keeping the plumbing where it is saves a lot of money."),
        ("What worktop material lasts longest?", "Quartz is durable and needs no sealing."),
        ("How much does a quartz worktop cost?", "Roughly 300 to 600 euros per metre, installed."),
        ("And the cabinets, flat-pack or custom?", "Flat-pack with custom fronts is a good middle way."),
    ],
    "docker-compose": [
        ("My docker compose app can't reach the postgres container", "Use the service name 'postgres' as the host."),
        ("I set host to localhost in the app config", "Inside compose, localhost is the app container itself."),
        ("Changed it to postgres, now: connection refused", "Postgres may not be ready: add a healthcheck."),
        ("How do I write the healthcheck?", "test: pg_isready -U postgres, with depends_on condition."),
        ("Works now, the app waits for postgres", "Great: keep the healthcheck in the compose file."),
    ],
    "puppy-training": [
        ("We got a puppy, how do we house-train her?", "Take her out after meals, naps and play."),
        ("She still has accidents at night", "Puppies hold it about one hour per month of age."),
        ("Should we use a crate at night?", "A crate helps house-training; keep it by your bed."),
        ("She cries in the crate", "Cover the crate and stay close for the first nights."),
        ("When can she sleep outside the crate?", "Once she has been dry at night for a few weeks."),
    ],
    "thesis-writing": [
        (
            "I have to write my master's thesis on solar panels",
            "Pick a precise question: efficiency, cost or recycling?",
        ),
        ("Efficiency of solar panels in cold climates", "Great topic: panels are more efficient when cold."),
        ("How should I structure the thesis?", "Introduction, literature, method, results, discussion."),
        ("Which sources for solar panel efficiency?", "NREL reports and the Solar Energy journal."),
        ("How long should the literature review be?", "About a fifth of the thesis."),
    ],
    "budget-spreadsheet": [
        ("Help me make a monthly budget spreadsheet", "Columns: category, planned, actual, difference."),
        ("What categories should the budget have?", "Rent, food, transport, utilities, savings, fun."),
        ("How do I compute the difference column?", "=C2-B2, then fill it down."),
        ("Can the spreadsheet highlight overspending?", "Conditional formatting: red when the difference is negative."),
        ("How much of the budget should go to savings?", "20% is a common target."),
    ],
    "hiking-trip": [
        ("Planning a hiking trip in the Dolomites in July", "Lovely: hut-to-hut hikes are popular there."),
        ("Which hut-to-hut route for 5 days?", "The Alta Via 1 fits 5 to 7 days."),
        ("Do we need to book the huts?", "Yes, July huts on the Alta Via 1 book up early."),
        ("What gear for the Dolomites in July?", "Rain jacket, layers, good boots; afternoon storms are common."),
        ("How fit do we need to be for the Alta Via?", "Comfortable with 6 hours of hiking a day."),
    ],
    "excel-vlookup": [
        ("My VLOOKUP returns #N/A", "The lookup value may not exist exactly in the first column."),
        ("The values look the same though", "Trailing spaces or numbers stored as text cause #N/A."),
        ("How do I remove the spaces?", "=TRIM(A2) in a helper column, then look that up."),
        ("Still #N/A for the numbers", "Convert them with =VALUE(A2) or Text to Columns."),
        ("Should I use XLOOKUP instead of VLOOKUP?", "Yes, XLOOKUP is simpler and not tied to the first column."),
    ],
    "greeting-then-resume": [
        ("good morning", "Good morning! How can I help?"),
        ("Can you review my resume for a nursing job?", "Sure, paste the resume or describe its sections."),
        ("My resume lists 4 years in an ICU", "Lead with the ICU experience and your certifications."),
        ("Should the resume include my BLS certification?", "Yes, list BLS and ACLS near the top."),
        ("How long should a nursing resume be?", "One page, two at most with a long ICU career."),
    ],
}
