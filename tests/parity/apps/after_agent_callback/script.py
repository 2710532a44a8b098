TURNS = ["How do I reset my password?"]
REPLIES = {"help_desk": ["Use the 'forgot password' link."]}
